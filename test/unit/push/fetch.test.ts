import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { collect, fetchPushBatch, readBatchRecord, recordFailedPushBatch } from '../../../activities/push/fetch.ts';
import { batchDoneKey, pushBatchKey, pushPartKey } from '../../../activities/push/layout.ts';
import type { PushBatch, PushRunRef } from '../../../activities/push/types.ts';
import { openStore } from '../../../config/storage.ts';
import { ValidationError } from '../../../connectors/errors.ts';
import type { SignalClient } from '../../../connectors/signal-api/client.ts';
import type {
  BulkEnrichItem,
  CallOptions,
  EnrichCompaniesParams,
  Signal,
} from '../../../connectors/signal-api/index.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import { useFreshDirs } from '../../helpers/temp-dir.ts';

const freshDir = useFreshDirs('signal-kit-push-fetch', 'out');

const signal = (id: string, at: string): Signal => ({
  signal_id: `sig_${id}`,
  signal_type: 'news',
  signal_subtype: 'companyNews',
  signal_name: `news ${id}`,
  detected_at: at,
  data: { summary: `news ${id}` },
});

const ok = (domain: string, signals: Signal[]): BulkEnrichItem => ({
  domain,
  status: 'ok',
  company: { name: domain, domain },
  signals,
  signal_summary: {},
  coverage: {},
});

/** A client whose bulk call answers from a table and records every call. */
function fakeClient(answer: (params: EnrichCompaniesParams) => BulkEnrichItem[] | Error) {
  const calls: { params: EnrichCompaniesParams; retry: unknown }[] = [];
  const client = {
    async enrichCompanies(params: EnrichCompaniesParams, call?: CallOptions) {
      await call?.beforeSend?.();
      calls.push({ params, retry: call?.retry });
      const results = answer(params);
      if (results instanceof Error) throw results;
      const signals = results.reduce((n, r) => n + (r.status === 'ok' ? r.signals.length : 0), 0);
      return {
        results,
        summary: { requested: params.domains.length, ok: 0, not_found: 0, error: 0, signals },
        credits: 2 * signals,
      };
    },
  };
  return { client: client as unknown as SignalClient, calls };
}

const at = (domains: string[], start: string | null) => domains.map((domain) => ({ domain, start, through: start }));

async function setup(
  shape: { detected_after: string | null; domains: string[] },
  limit = 50,
): Promise<{ store: Store; run: PushRunRef }> {
  const batch: Omit<PushBatch, 'index'> = {
    round: 0,
    detected_after: shape.detected_after,
    limit,
    domains: at(shape.domains, shape.detected_after),
  };
  const store = openStore(freshDir());
  const run: PushRunRef = { name: 'p', output: store.url, runId: '20260301T120000Z', date: '2026-03-01' };
  await store.writeText(pushBatchKey(run, 0), JSON.stringify({ index: 0, ...batch }));
  return { store, run };
}

async function partLines(store: Store, key: string): Promise<Record<string, unknown>[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
  return gunzipSync(Buffer.concat(chunks))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('collect', () => {
  const batch: PushBatch = {
    index: 3,
    round: 0,
    detected_after: '2026-03-01T00:00:00.000Z',
    limit: 3,
    domains: [
      ...at(['a.com', 'b.com', 'c.com', 'd.com', 'e.com'], '2026-03-01T00:00:00.000Z'),
      { domain: 'f.com', start: '2026-03-04T00:00:00.000Z', through: '2026-03-04T00:00:00.000Z' },
      {
        domain: 'g.com',
        start: '2026-03-01T00:00:00.000Z',
        through: '2026-03-01T00:00:00.000Z',
        pushed: [['sig_g1', '2026-03-02T00:00:00Z']],
      },
    ],
  };

  it('writes each signal a domain needs once, counts the rest as overlap, and gives the call newest time to all', () => {
    const { lines, record } = collect(batch, [
      ok('a.com', [signal('a1', '2026-03-02T00:00:00Z'), signal('a0', '2026-03-01T00:00:00Z')]),
      ok('B.com', []),
      { domain: 'c.com', status: 'not_found' },
      { domain: 'd.com', status: 'error', error: { code: 'invalid_domain', message: 'no' } },
      // f.com shares the call from an older start: what it pushed before its own start is paid again and dropped.
      ok('f.com', [signal('f2', '2026-03-05T00:00:00Z'), signal('f1', '2026-03-03T00:00:00Z')]),
      // g.com pushed g1 in a call that left it behind: it comes back, is dropped, and g2 is new.
      ok('g.com', [signal('g2', '2026-03-06T00:00:00Z'), signal('g1', '2026-03-02T00:00:00Z')]),
    ]);
    // a0 is at the start (an inclusive `detected_after` would return it): not written again.
    expect(lines.map((line) => [line.domain, line.signal_id])).toEqual([
      ['a.com', 'sig_a1'],
      ['f.com', 'sig_f2'],
      ['g.com', 'sig_g2'],
    ]);
    expect(record.overlap).toEqual({ signals: 3, credits: 6 });
    const newest = '2026-03-06T00:00:00.000Z';
    expect(record.domains).toEqual({
      'a.com': { through: newest, pushed: [] },
      'b.com': { through: newest, pushed: [] },
      'c.com': { through: newest, pushed: [] },
      'f.com': { through: newest, pushed: [] },
      'g.com': { through: newest, pushed: [] },
    });
    expect(record.counts).toMatchObject({ lines: 3, ok: 4, not_found: 1, error: 2 });
    expect(record.errors.map((e) => [e.domain, e.code])).toEqual([
      ['d.com', 'invalid_domain'],
      ['e.com', 'missing_result'],
    ]);
  });

  it('leaves a domain that filled the limit behind, remembering what it pushed; at 500 the rest is unreachable', () => {
    const three = [
      signal('a3', '2026-03-05T00:00:00Z'),
      signal('a2', '2026-03-04T00:00:00Z'),
      signal('a1', '2026-03-03T00:00:00Z'),
    ];
    const small = collect(batch, [ok('a.com', three)]);
    expect(small.record.domains['a.com']).toEqual({
      through: null,
      behind: true,
      pushed: three.map((s) => [s.signal_id, s.detected_at]),
    });
    // The coverage says exactly how many exist: all three were returned, so nothing is behind.
    const counted = collect(batch, [{ ...ok('a.com', three), coverage: { total_after_filters: 3 } }]);
    expect(counted.record.domains['a.com']).toEqual({ through: '2026-03-05T00:00:00.000Z', pushed: [] });

    const max = collect({ ...batch, limit: 500 }, [{ ...ok('a.com', three), coverage: { total_after_filters: 710 } }]);
    expect(max.record.domains['a.com']).toEqual({ through: '2026-03-05T00:00:00.000Z', pushed: [], missing: 707 });
  });

  it('keeps a backfill to its window and remembers signals inside the lookback window', () => {
    const window = collect({ ...batch, before: '2026-03-04T00:00:00.000Z' }, [
      ok('a.com', [signal('a2', '2026-03-04T00:00:00Z'), signal('a1', '2026-03-03T00:00:00Z')]),
    ]);
    expect(window.lines.map((line) => line.signal_id)).toEqual(['sig_a1']);
    expect(window.record.overlap.signals).toBe(1);

    const lookback = collect({ ...batch, lookback_ms: 36 * 3_600_000 }, [
      ok('a.com', [signal('a2', '2026-03-04T00:00:00Z'), signal('a1', '2026-03-02T00:00:00Z')]),
    ]);
    expect(lookback.record.domains['a.com']?.pushed).toEqual([['sig_a2', '2026-03-04T00:00:00Z']]);
  });
});

describe('fetchPushBatch', () => {
  const filters = { limit: 50, signal_types: ['news'] };

  /** A run over a.com and b.com whose batch 0 is fetched and its part published: three signals in all. */
  async function fetchedTwoDomains() {
    const { store, run } = await setup({ detected_after: null, domains: ['a.com', 'b.com'] });
    const { client, calls } = fakeClient(() => [
      ok('a.com', [signal('2', '2026-03-03T00:00:00Z'), signal('1', '2026-03-02T00:00:00Z')]),
      ok('b.com', [signal('3', '2026-03-04T00:00:00Z')]),
    ]);
    await fetchPushBatch(client, store, { run, index: 0, filters });
    return { store, run, client, calls };
  }

  it('asks once with the batch start and limit and no client retries, then answers from its record', async () => {
    const { store, run } = await setup({ detected_after: '2026-03-01T00:00:00.000Z', domains: ['a.com', 'b.com'] });
    const { client, calls } = fakeClient(() => [ok('a.com', [signal('1', '2026-03-02T00:00:00Z')]), ok('b.com', [])]);
    const first = await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(first).toMatchObject({ reused: false, failed: false, counts: { lines: 1, ok: 2, credits: 2 } });
    expect(calls).toEqual([
      {
        params: {
          domains: ['a.com', 'b.com'],
          detected_after: '2026-03-01T00:00:00.000Z',
          signal_types: ['news'],
          limit: 50,
        },
        retry: false,
      },
    ]);
    expect(await partLines(store, pushPartKey(run, 0))).toEqual([
      { domain: 'a.com', ...signal('1', '2026-03-02T00:00:00Z') },
    ]);

    const again = await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(again).toEqual({ ...first, reused: true });
    expect(calls).toHaveLength(1);
  });

  it('writes no part when nothing is new, and still records the batch', async () => {
    const { store, run } = await setup({ detected_after: null, domains: ['a.com'] });
    const { client } = fakeClient(() => [ok('a.com', [])]);
    await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(await store.exists(pushPartKey(run, 0))).toBe(false);
    const record = await readBatchRecord(store, run, 0);
    expect(record).toMatchObject({ index: 0, detected_after: null, domains: { 'a.com': { through: null } } });
    expect(record?.part).toBeUndefined();
  });

  it('records a batch whose answer and part were saved before a crash without calling the API again', async () => {
    const { store, run, client, calls } = await fetchedTwoDomains();
    const original = await readBatchRecord(store, run, 0);
    await store.delete(batchDoneKey(run, 0)); // the crash: part published, record not yet written
    const retried = await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(calls).toHaveLength(1);
    expect(retried).toMatchObject({ reused: true, counts: { lines: 3, credits: 6 } });
    const rebuilt = await readBatchRecord(store, run, 0);
    expect(rebuilt?.domains).toEqual(original?.domains);
    expect(rebuilt?.part).toEqual(original?.part);
  });

  it('does not record a part spoiled before its record was written: the batch is fetched again, once', async () => {
    const { store, run, client, calls } = await fetchedTwoDomains();
    await store.delete(batchDoneKey(run, 0)); // the crash: part published, record not yet written
    // The part's bytes replaced behind its metadata (a copy gone wrong, a disk error): its sha256 no longer holds.
    const partPath = join(fileURLToPath(store.url), pushPartKey(run, 0));
    await writeFile(partPath, gzipSync('{"x":1}\n{"x":2}\n{"x":3}\n'));
    await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(calls).toHaveLength(2);
    const record = await readBatchRecord(store, run, 0);
    const bytes = await readFile(partPath);
    expect(record?.part?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect((await partLines(store, pushPartKey(run, 0))).map((line) => line['signal_id'])).toEqual([
      'sig_2',
      'sig_1',
      'sig_3',
    ]);
    // Fetched again once: the new part proves itself.
    await store.delete(batchDoneKey(run, 0));
    await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(calls).toHaveLength(2);
  });

  it('turns a rejected request into error records, and lets retryable failures through with their rule', async () => {
    const { store, run } = await setup({ detected_after: null, domains: ['a.com'] });
    const rejected = fakeClient(() => new ValidationError({ status: 422, code: 'validation_error', message: 'bad' }));
    const result = await fetchPushBatch(rejected.client, store, { run, index: 0, filters });
    expect(result.counts).toMatchObject({ error: 1, lines: 0 });

    const failing = await setup({ detected_after: null, domains: ['a.com'] });
    const { ServerError } = await import('../../../connectors/errors.ts');
    const down = fakeClient(() => new ServerError({ status: 503, code: 'unavailable', message: 'down' }));
    await expect(
      fetchPushBatch(down.client, failing.store, { run: failing.run, index: 0, filters }),
    ).rejects.toMatchObject({ retryable: true, fatal: false, rule: { type: 'ServerError' } });
  });

  it('records a batch whose retries are spent as failed, and fetches it again on a re-run', async () => {
    const { store, run } = await setup({ detected_after: null, domains: ['a.com', 'b.com'] });
    const failed = await recordFailedPushBatch(store, { run, index: 0, message: 'gave up' });
    expect(failed).toMatchObject({ failed: true, counts: { error: 2 } });
    expect((await readBatchRecord(store, run, 0))?.errors.map((e) => e.code)).toEqual(['batch_failed', 'batch_failed']);
    const { client, calls } = fakeClient(() => [ok('a.com', []), ok('b.com', [])]);
    const redone = await fetchPushBatch(client, store, { run, index: 0, filters });
    expect(redone).toMatchObject({ reused: false, failed: false, counts: { ok: 2, error: 0 } });
    expect(calls).toHaveLength(1);
  });
});
