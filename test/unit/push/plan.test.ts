import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pushBatchKey } from '../../../activities/push/layout.ts';
import { planBatches, preparePushRun } from '../../../activities/push/plan.ts';
import type { PushBatch, PushRunRef } from '../../../activities/push/types.ts';
import { commitWatermarks } from '../../../activities/push/watermarks.ts';
import { openStore } from '../../../connectors/storage/index.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-push-plan-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('planBatches', () => {
  it('never mixes watermarks in one call, splits groups at the batch size, and puts unseen domains first', () => {
    const groups = new Map<string, string[]>([
      ['2026-03-02T00:00:00.000Z', ['c.com']],
      ['', ['a.com', 'b.com', 'x.com']],
      ['2026-03-01T00:00:00.000Z', ['d.com', 'e.com']],
    ]);
    expect(planBatches(groups, 2)).toEqual([
      { index: 0, detected_after: null, domains: ['a.com', 'b.com'] },
      { index: 1, detected_after: null, domains: ['x.com'] },
      { index: 2, detected_after: '2026-03-01T00:00:00.000Z', domains: ['d.com', 'e.com'] },
      { index: 3, detected_after: '2026-03-02T00:00:00.000Z', domains: ['c.com'] },
    ]);
  });
});

describe('preparePushRun', () => {
  it('groups the watchlist by watermark, dedupes, counts bad rows, and returns the same plan when retried', async () => {
    const dir = join(root, 'one');
    const csv = join(root, 'watchlist.csv');
    const rows = ['domain'];
    for (let i = 0; i < 150; i++) rows.push(`https://www.co${i}.com/about`);
    rows.push('co1.com', 'CO2.COM', '', 'not a domain');
    writeFileSync(csv, `${rows.join('\n')}\n`);
    const store = openStore(dir);
    await commitWatermarks(
      store,
      'push',
      'earlier',
      new Map([
        ['co0.com', '2026-03-01T00:00:00Z'],
        ['co1.com', '2026-03-01T00:00:00Z'],
        ['co2.com', '2026-03-02T00:00:00Z'],
      ]),
    );
    const run: PushRunRef = { name: 'push', output: store.url, runId: '20260303T000000Z', date: '2026-03-03' };
    const request = { run, watchlist: pathToFileURL(csv).href, since: '2026-01-01T00:00:00Z' };
    const plan = await preparePushRun(openStore, request);
    expect(plan).toEqual({
      rows: 154,
      distinct: 150,
      duplicates: 2,
      invalid: 2,
      batches: 4, // 147 new domains at `since` (2 calls), co0+co1 (1 call), co2 (1 call)
      groups: 3,
      watermarksFrom: 'earlier',
    });
    const batches: PushBatch[] = [];
    for (let i = 0; i < plan.batches; i++) batches.push(JSON.parse(await store.readText(pushBatchKey(run, i))));
    expect(batches.map((b) => [b.detected_after, b.domains.length])).toEqual([
      ['2026-01-01T00:00:00.000Z', 100],
      ['2026-01-01T00:00:00.000Z', 47],
      ['2026-03-01T00:00:00.000Z', 2],
      ['2026-03-02T00:00:00.000Z', 1],
    ]);

    // Watermarks moved by a later run do not change this run's plan.
    await commitWatermarks(store, 'push', 'later', new Map([['co5.com', '2026-03-05T00:00:00Z']]));
    expect(await preparePushRun(openStore, request)).toEqual(plan);
  });

  it('refuses a name that is not a safe path segment, an empty watchlist and a bad since', async () => {
    const store = openStore(join(root, 'two'));
    const empty = join(root, 'empty.csv');
    writeFileSync(empty, 'domain\n');
    const run = (name: string): PushRunRef => ({ name, output: store.url, runId: 'r', date: '2026-03-03' });
    await expect(preparePushRun(openStore, { run: run('../x'), watchlist: pathToFileURL(empty).href })).rejects.toThrow(
      /push name/,
    );
    await expect(preparePushRun(openStore, { run: run('ok'), watchlist: pathToFileURL(empty).href })).rejects.toThrow(
      /no data rows/,
    );
    await expect(
      preparePushRun(openStore, { run: run('ok'), watchlist: pathToFileURL(empty).href, since: 'last week' }),
    ).rejects.toThrow(/since "last week" is not an ISO 8601 date/);
  });
});
