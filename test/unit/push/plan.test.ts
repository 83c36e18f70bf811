import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pushBatchKey } from '../../../activities/push/layout.ts';
import { packCalls } from '../../../activities/push/pack.ts';
import { preparePushRun } from '../../../activities/push/plan.ts';
import type { DomainOutcome, PushBatch, PushBatchDomain, PushRunRef } from '../../../activities/push/types.ts';
import { commitWatermarkState } from '../../../activities/state/watermarks.ts';

const marks = (entries: [string, string][]) =>
  new Map(entries.map(([domain, through]): [string, DomainOutcome] => [domain, { through, pushed: [] }]));

import { openStore } from '../../../config/storage.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-push-plan-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('packCalls', () => {
  const entry = (domain: string, start: string | null) => ({ domain, start, through: start });
  const T1 = '2026-03-01T00:00:00.000Z';
  const T2 = '2026-03-02T00:00:00.000Z';
  const T3 = '2026-03-03T00:00:00.000Z';

  it('fills whole calls from each group, packs the leftovers together from their oldest start, never mixes in none', () => {
    const domains = [
      ...['n1', 'n2', 'n3'].map((d) => entry(d, null)),
      ...['a1', 'a2', 'a3', 'a4', 'a5'].map((d) => entry(d, T1)),
      ...['b1', 'b2'].map((d) => entry(d, T2)),
      entry('c1', T3),
    ];
    const { calls, mixed } = packCalls(domains, 2);
    expect(calls.map((c) => [c.detected_after, c.domains.map((d) => d.domain)])).toEqual([
      [null, ['n1', 'n2']],
      [null, ['n3']],
      [T1, ['a1', 'a2']],
      [T1, ['a3', 'a4']],
      [T2, ['b1', 'b2']],
      [T1, ['a5', 'c1']],
    ]);
    expect(mixed).toBe(1);
  });

  it('makes ceil(domains / size) calls for a watchlist whose domains share few watermarks', () => {
    const domains: PushBatchDomain[] = [];
    for (let i = 0; i < 1000; i++) domains.push(entry(`d${i}.com`, [T1, T2, T3][i % 3]!));
    const { calls } = packCalls(domains, 100);
    expect(calls).toHaveLength(10);
    expect(calls.every((c) => c.domains.length === 100)).toBe(true);
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
    await commitWatermarkState(
      store,
      'push',
      'earlier',
      marks([
        ['co0.com', '2026-03-01T00:00:00Z'],
        ['co1.com', '2026-03-01T00:00:00Z'],
        ['co2.com', '2026-03-02T00:00:00Z'],
      ]),
    );
    const run: PushRunRef = { name: 'push', output: store.url, runId: '20260303T000000Z', date: '2026-03-03' };
    const request = { run, watchlist: pathToFileURL(csv).href, since: '2026-01-01T00:00:00Z', limit: 500 };
    const plan = await preparePushRun(openStore, request);
    expect(plan).toEqual({
      rows: 154,
      distinct: 150,
      duplicates: 2,
      invalid: 2,
      batches: 2, // 100 at `since`, then the 47 others left with co0, co1 (2026-03-01) and co2 (2026-03-02)
      groups: 3,
      mixed: 3,
      watermarksFrom: 'earlier',
    });
    const batches: PushBatch[] = [];
    for (let i = 0; i < plan.batches; i++) batches.push(JSON.parse(await store.readText(pushBatchKey(run, i))));
    expect(batches.map((b) => [b.detected_after, b.domains.length])).toEqual([
      ['2026-01-01T00:00:00.000Z', 100],
      ['2026-01-01T00:00:00.000Z', 50],
    ]);
    expect(batches[1]?.domains.slice(-3)).toEqual([
      { domain: 'co0.com', start: '2026-03-01T00:00:00.000Z', through: '2026-03-01T00:00:00.000Z' },
      { domain: 'co1.com', start: '2026-03-01T00:00:00.000Z', through: '2026-03-01T00:00:00.000Z' },
      { domain: 'co2.com', start: '2026-03-02T00:00:00.000Z', through: '2026-03-02T00:00:00.000Z' },
    ]);

    // Watermarks moved by a later run do not change this run's plan.
    await commitWatermarkState(store, 'push', 'later', marks([['co5.com', '2026-03-05T00:00:00Z']]));
    expect(await preparePushRun(openStore, request)).toEqual(plan);
  });

  it('refuses a name that is not a safe path segment, an empty watchlist and a bad since', async () => {
    const store = openStore(join(root, 'two'));
    const empty = join(root, 'empty.csv');
    writeFileSync(empty, 'domain\n');
    const run = (name: string): PushRunRef => ({ name, output: store.url, runId: 'r', date: '2026-03-03' });
    await expect(
      preparePushRun(openStore, { run: run('../x'), watchlist: pathToFileURL(empty).href, limit: 500 }),
    ).rejects.toThrow(/push name/);
    await expect(
      preparePushRun(openStore, { run: run('ok'), watchlist: pathToFileURL(empty).href, limit: 500 }),
    ).rejects.toThrow(/no data rows/);
    await expect(
      preparePushRun(openStore, {
        run: run('ok'),
        watchlist: pathToFileURL(empty).href,
        since: 'last week',
        limit: 500,
      }),
    ).rejects.toThrow(/since "last week" is not an ISO 8601 date/);
  });
});
