import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** A JSON Schema 2020-12 validator with the standard formats (date-time, …), strict about the schemas themselves. */
export function jsonSchemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  formats.default(ajv);
  return ajv;
}

/** A JSON Schema as shipped in the package's schemas/ folder. */
export async function shippedSchema(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(new URL(`../../schemas/${file}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
}
