/**
 * What the scheduled-push promise tests share: their clock and watchlist files, running a push on the real workers,
 * and reading a run's manifest and manifested parts as a consumer of the bucket would. The truth a run is checked
 * against is in oracle.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type { PushManifest, PushResult } from '../../activities/push/types.ts';
import type { Store } from '../../connectors/storage/index.ts';
import type { JobEnv } from '../../testkit/job-env.ts';
import type { ScheduledPushInput } from '../../workflows/scheduled-push.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';
import { runOnEnvQueues } from './helpers.ts';

export const DAY = 86_400_000;

/** When the push tests' first run happens (2026-03-01 06:00 UTC); each moves the sandbox's clock on from there. */
export const FIRST_RUN_AT = Date.UTC(2026, 2, 1, 6);

/** Writes `lines` (the header first) as `dir`/watchlist.csv and returns its file:// URL. */
export async function writeWatchlist(dir: string, lines: string[]): Promise<string> {
  const path = join(dir, 'watchlist.csv');
  await writeFile(path, `${lines.join('\n')}\n`);
  return pathToFileURL(path).href;
}

export interface PushLineRead {
  domain: string;
  signal_id: string;
  detected_at: string;
}

/** Runs one push workflow to its end on the env's workers. */
export function runPush(
  env: JobEnv,
  workflowId: string,
  input: Omit<ScheduledPushInput, 'taskQueue' | 'apiTaskQueue'>,
): Promise<PushResult> {
  return runOnEnvQueues<PushResult>(env, 'scheduledPush', workflowId, input);
}

const validators = (async () => {
  const ajv = jsonSchemaValidator();
  return {
    manifest: ajv.compile(await shippedSchema('push-manifest.schema.json')),
    line: ajv.compile(await shippedSchema('push-signal-line.schema.json')),
  };
})();

/**
 * A run's manifest and the lines of its manifested parts, as a consumer of the bucket reads them: each part's line
 * count checked, and the manifest and every line valid under the shipped JSON Schemas.
 */
export async function readPushRun(
  store: Store,
  result: PushResult,
): Promise<{ manifest: PushManifest; lines: PushLineRead[] }> {
  const schemas = await validators;
  const prefix = `${result.name}/signals/dt=${result.dt}/run-${result.runId}/`;
  const manifest = JSON.parse(await store.readText(`${prefix}_manifest.json`)) as PushManifest;
  expect(schemas.manifest(manifest), `push manifest: ${JSON.stringify(schemas.manifest.errors)}`).toBe(true);
  const lines: PushLineRead[] = [];
  for (const part of manifest.parts) {
    expect(part.key.startsWith(prefix)).toBe(true);
    if (part.table !== undefined && part.table !== 'lines') continue; // a flat table (docs/tables.md)
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
    const text = gunzipSync(Buffer.concat(chunks)).toString('utf8');
    const partLines = text.split('\n').filter(Boolean);
    expect(partLines).toHaveLength(part.lines);
    for (const text of partLines) {
      const line = JSON.parse(text) as PushLineRead;
      if (!schemas.line(line))
        expect.fail(`${part.key}: ${text.slice(0, 200)}: ${JSON.stringify(schemas.line.errors)}`);
      lines.push(line);
    }
  }
  return { manifest, lines };
}

export function sorted(ids: Iterable<string>): string[] {
  return [...ids].sort();
}
