/** What the feed tests share: reading a run's manifest and lines as a consumer of the bucket reads them. */
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { feedDir } from '../../activities/feeds/layout.ts';
import type { FeedManifest, FeedResult } from '../../activities/feeds/types.ts';
import type { Store } from '../../connectors/storage/index.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';

const validators = (async () => {
  const ajv = jsonSchemaValidator();
  return {
    manifest: ajv.compile(await shippedSchema('feed-manifest.schema.json')),
    line: ajv.compile(await shippedSchema('feed-line.schema.json')),
  };
})();

/** A run's manifest and the lines of its manifested parts, as a consumer of the bucket reads them (shipped schemas). */
export async function readFeedRun(store: Store, kind: FeedKind, result: FeedResult) {
  const schemas = await validators;
  const prefix = `${result.name}/${feedDir(kind)}/dt=${result.dt}/run-${result.runId}/`;
  const manifest = JSON.parse(await store.readText(`${prefix}_manifest.json`)) as FeedManifest;
  expect(schemas.manifest(manifest), JSON.stringify(schemas.manifest.errors)).toBe(true);
  const lines: Record<string, unknown>[] = [];
  for (const part of manifest.parts) {
    expect(part.key.startsWith(prefix)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
    const text = gunzipSync(Buffer.concat(chunks)).toString('utf8').split('\n').filter(Boolean);
    expect(text).toHaveLength(part.lines);
    for (const line of text) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (!schemas.line(parsed))
        expect.fail(`${part.key}: ${line.slice(0, 200)}: ${JSON.stringify(schemas.line.errors)}`);
      lines.push(parsed);
    }
  }
  return { manifest, lines };
}
