// Writes the output contract's JSON Schemas into schemas/ from the zod schemas (contract/manifest-schemas.ts).
// Run after changing those schemas: `npm run schemas`; test/unit/contract/json-schemas.test.ts fails until then.
import { mkdir, writeFile } from 'node:fs/promises';
import { outputJsonSchemas } from '../contract/manifest-schemas.ts';

const dir = new URL('../schemas/', import.meta.url);
await mkdir(dir, { recursive: true });
for (const [file, schema] of Object.entries(outputJsonSchemas())) {
  await writeFile(new URL(file, dir), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`schemas/${file}`);
}
