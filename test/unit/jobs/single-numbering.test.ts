/**
 * A job with more than 10,000 batches of single calls (over 200,000 rows named without a website): its manifest
 * counts the calls and the finished batches of every one of them, `single-10000` as much as `single-00000`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizeJob } from '../../../activities/jobs/finalize.ts';
import { singlePartKey } from '../../../activities/jobs/layout.ts';
import { linesPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef, Manifest } from '../../../activities/jobs/types.ts';
import { encodePart, writeEncodedPart, zeroCounts } from '../../../activities/parts.ts';
import { openStore } from '../../../config/storage.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'single-numbering-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('single batches numbered past 9999', () => {
  it('are counted in the manifest like the first ones', async () => {
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const job: JobRef = { jobId: 'many-singles', kind: 'enrich', output };
    // Two single batches ran, the first and the 10,001st, each one paid call for one row.
    for (const index of [0, 10_000]) {
      const key = singlePartKey(job, index);
      const line = { row: index + 1, status: 'ok', input: `Company ${index}` };
      const counts = { ...zeroCounts(), lines: 1, ok: 1, credits: 2, calls: 1 };
      await writeEncodedPart(
        store,
        'gzip',
        key,
        encodePart('gzip', [line]),
        counts,
        'done',
        [],
        linesPartIdentity(job, key),
      );
    }
    await finalizeJob(store, {
      job,
      input: 'x',
      startedAt: new Date().toISOString(),
      status: 'completed',
      prepared: {
        input: 'x',
        rows: 2,
        distinct: 2,
        duplicates: 0,
        batches: 0,
        invalid: 0,
        batchSize: 100,
        singleBatches: 10_001,
      },
    });
    const manifest = JSON.parse(await store.readText('many-singles/_manifest.json')) as Manifest & {
      calls: { single: number };
      batches: { done: number };
    };
    expect(manifest.counts.ok).toBe(2);
    expect(manifest.calls.single).toBe(2);
    expect(manifest.batches.done).toBe(2);
  });
});
