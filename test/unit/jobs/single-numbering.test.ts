/**
 * A job with more than 10,000 batches of single calls (over 200,000 rows named without a website): its manifest
 * counts the calls and the finished batches of every one of them, `single-10000` as much as `single-00000`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { singlePartKey } from '../../../activities/jobs/layout.ts';
import { linesPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef, Manifest } from '../../../activities/jobs/types.ts';
import { encodePart, writeEncodedPart, zeroCounts } from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { finalizeCompleted } from '../../helpers/finalize.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tempDir = useTempDir('single-numbering');

describe('single batches numbered past 9999', () => {
  it('are counted in the manifest like the first ones', async () => {
    const output = pathToFileURL(join(tempDir(), 'out')).href;
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
    await finalizeCompleted(store, job, 2, { batches: 0, singleBatches: 10_001 });
    const manifest = JSON.parse(await store.readText('many-singles/_manifest.json')) as Manifest & {
      calls: { single: number };
      batches: { done: number };
    };
    expect(manifest.counts.ok).toBe(2);
    expect(manifest.calls.single).toBe(2);
    expect(manifest.batches.done).toBe(2);
  });
});
