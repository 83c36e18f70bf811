import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchPushBatch, recordFailedPushBatch } from '../../../activities/push/fetch.ts';
import { finalizePushRun } from '../../../activities/push/finalize.ts';
import { pushBatchKey, pushManifestKey } from '../../../activities/push/layout.ts';
import { preparePushCatchUp, type StoredPlan } from '../../../activities/push/plan.ts';
import type { PushManifest, PushRound, PushRunRef } from '../../../activities/push/types.ts';
import { planKey, watermarksKey } from '../../../activities/run/scheduled-layout.ts';
import { commitWatermarkState, readWatermarkState } from '../../../activities/state/watermarks.ts';
import { openStore } from '../../../config/storage.ts';
import type { SignalClient } from '../../../connectors/signal-api/client.ts';
import type { CallOptions, EnrichCompaniesParams } from '../../../connectors/signal-api/index.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import { oneSignalAnswer } from './one-signal.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-push-finalize-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Records the order in which keys are published. */
function recording(store: Store): { store: Store; writes: string[] } {
  const writes: string[] = [];
  const wrapped = Object.create(store) as Store;
  wrapped.writeText = async (key, text, options) => {
    await store.writeText(key, text, options);
    writes.push(key);
  };
  return { store: wrapped, writes };
}

/** The push run both tests finalize, stored under `store`. */
function runIn(store: Store): PushRunRef {
  return { name: 'p', output: store.url, runId: '20260306T000000Z', date: '2026-03-06' };
}

/** A clean plan (no duplicates, invalid or mixed rows) with the sizes a test chooses. */
function storedPlan(
  sizes: Pick<StoredPlan, 'rows' | 'distinct' | 'batches' | 'groups' | 'watermarksFrom'>,
): StoredPlan {
  return {
    duplicates: 0,
    invalid: 0,
    mixed: 0,
    watchlist: 'file:///w.csv',
    since: null,
    planned_at: '2026-03-06T00:00:00.000Z',
    invalid_rows: [],
    ...sizes,
  };
}

/** Finalizes `run` as completed, started and scheduled at the plan's time. */
function finalizeCompleted(store: Store, run: PushRunRef, plan: StoredPlan, rounds: PushRound[]) {
  return finalizePushRun(store, {
    run,
    watchlist: plan.watchlist,
    status: 'completed',
    startedAt: '2026-03-06T00:00:00.000Z',
    scheduledAt: '2026-03-06T00:00:00.000Z',
    rounds,
  });
}

const client = {
  async enrichCompanies(params: EnrichCompaniesParams, call?: CallOptions) {
    await call?.beforeSend?.();
    const results = params.domains.map(oneSignalAnswer);
    return {
      results,
      summary: { requested: 0, ok: 0, not_found: 0, error: 0, signals: 0 },
      credits: 2 * results.length,
    };
  },
} as unknown as SignalClient;

describe('finalizePushRun', () => {
  it('publishes the manifest before the watermarks, and a failed batch leaves its domains where they were', async () => {
    const { store, writes } = recording(openStore(join(root, 'one')));
    await commitWatermarkState(
      store,
      'p',
      'r0',
      new Map([['c.com', { through: '2026-03-01T00:00:00.000Z', pushed: [] }]]),
    );
    const run = runIn(store);
    const plan = storedPlan({ rows: 3, distinct: 3, batches: 2, groups: 2, watermarksFrom: 'r0' });
    await store.writeText(planKey(run), JSON.stringify(plan));
    await store.writeText(
      pushBatchKey(run, 0),
      JSON.stringify({
        index: 0,
        round: 0,
        detected_after: null,
        limit: 500,
        domains: ['a.com', 'b.com'].map((domain) => ({ domain, start: null, through: null })),
      }),
    );
    await store.writeText(
      pushBatchKey(run, 1),
      JSON.stringify({
        index: 1,
        round: 0,
        detected_after: '2026-03-01T00:00:00.000Z',
        limit: 500,
        domains: [{ domain: 'c.com', start: '2026-03-01T00:00:00.000Z', through: '2026-03-01T00:00:00.000Z' }],
      }),
    );
    await fetchPushBatch(client, store, { run, index: 0, filters: { limit: 500 } });
    await recordFailedPushBatch(store, { run, index: 1, message: 'service unavailable' });
    writes.length = 0;

    const result = await finalizeCompleted(store, run, plan, []);
    expect(writes).toEqual([pushManifestKey(run), watermarksKey('p')]);
    expect(result).toMatchObject({
      status: 'completed_with_errors',
      signals: 2,
      credits: 4,
      parts: 1,
      errors: 1,
      watermarksAdvanced: 2,
    });
    const manifest = JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
    expect(manifest).toMatchObject({
      run_id: run.runId,
      // Read alone, the manifest locates its parts: their keys are relative to `output`.
      output: store.url,
      dt: '2026-03-06',
      status: 'completed_with_errors',
      counts: { domains: 3, ok: 2, error: 1, signals: 2 },
      batches: { total: 2, done: 2, failed: 1 },
      watermarks: { from_run: 'r0', domains_advanced: 2 },
    });
    expect(manifest.errors).toEqual([{ domain: 'c.com', code: 'batch_failed', message: 'service unavailable' }]);
    const marks = await readWatermarkState(store, 'p');
    expect(Object.fromEntries(marks.marks)).toEqual({
      'a.com': '2026-03-05T00:00:00.000Z',
      'b.com': '2026-03-05T00:00:00.000Z',
      'c.com': '2026-03-01T00:00:00.000Z',
    });
  });
});

describe('a domain with more than 500 new signals', () => {
  const signal = (id: string, type: string, at: string) => ({
    signal_id: `sig_${id}`,
    signal_type: type,
    signal_subtype: '',
    signal_name: '',
    detected_at: at,
    data: { summary: id },
  });
  const answer = (signals: ReturnType<typeof signal>[], total: number, types: string[]) => ({
    results: [
      {
        domain: 'a.com',
        status: 'ok' as const,
        company: { name: 'a', domain: 'a.com' },
        signals,
        signal_summary: {},
        coverage: { total_after_filters: total, signal_types_available: types },
      },
    ],
    summary: { requested: 1, ok: 1, not_found: 0, error: 0, signals: signals.length },
    credits: 2 * signals.length,
  });

  it('is asked once per signal type, writes each signal once, and names what one type still leaves out', async () => {
    const store = openStore(join(root, 'narrow'));
    const run = runIn(store);
    const plan = storedPlan({ rows: 1, distinct: 1, batches: 1, groups: 1, watermarksFrom: null });
    await store.writeText(planKey(run), JSON.stringify(plan));
    const start = '2026-03-01T00:00:00.000Z';
    await store.writeText(
      pushBatchKey(run, 0),
      JSON.stringify({
        index: 0,
        round: 0,
        detected_after: start,
        limit: 2,
        domains: [{ domain: 'a.com', start, through: start }],
      }),
    );
    // Newest first: the first call (limit 2) gets two of the news; the service counts 710 after the start.
    const asked: EnrichCompaniesParams[] = [];
    const byType: Record<string, ReturnType<typeof answer>> = {
      news: answer([signal('n3', 'news', '2026-03-05T00:00:00Z'), signal('n2', 'news', '2026-03-04T00:00:00Z')], 2, [
        'news',
        'sec-8k',
      ]),
      'sec-8k': answer([signal('s1', 'sec-8k', '2026-03-03T00:00:00Z')], 708, ['news', 'sec-8k']),
    };
    const fake = {
      async enrichCompanies(params: EnrichCompaniesParams, call?: CallOptions) {
        await call?.beforeSend?.();
        asked.push(params);
        if (params.signal_types?.length === 1) return byType[params.signal_types[0]!]!;
        return answer(
          [signal('n3', 'news', '2026-03-05T00:00:00Z'), signal('n2', 'news', '2026-03-04T00:00:00Z')],
          710,
          ['news', 'sec-8k'],
        );
      },
    } as unknown as SignalClient;
    const filters = { limit: 2 };
    await fetchPushBatch(fake, store, { run, index: 0, filters });
    const limitRound = await preparePushCatchUp(store, { run, round: 1, kind: 'limit', from: 0, to: 1, limit: 500 });
    expect(limitRound).toMatchObject({ first: 1, count: 1, domains: 1 });
    await fetchPushBatch(fake, store, { run, index: 1, filters });
    const narrow = await preparePushCatchUp(store, { run, round: 2, kind: 'narrow', from: 0, to: 2, limit: 500 });
    expect(narrow).toMatchObject({ first: 2, count: 2, domains: 1 });
    await fetchPushBatch(fake, store, { run, index: 2, filters });
    await fetchPushBatch(fake, store, { run, index: 3, filters });
    expect(asked.map((p) => [p.limit, p.signal_types ?? null])).toEqual([
      [2, null],
      [500, null],
      [500, ['news']],
      [500, ['sec-8k']],
    ]);

    const result = await finalizeCompleted(store, run, plan, [limitRound, narrow]);
    const manifest = JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
    // n3 and n2 once (first call), s1 once (its type's call); everything returned again is overlap.
    expect(result).toMatchObject({ signals: 3, status: 'completed_with_errors', incompleteDomains: ['a.com'] });
    expect(manifest.overlap.signals).toBe(2 + 2);
    expect(manifest.incomplete_domains).toEqual([{ domain: 'a.com', reason: 'unreachable', missing: 707 }]);
    expect(manifest.calls).toEqual({ total: 4, first_round: 1, catch_up: 3 });
    expect((await readWatermarkState(store, 'p')).marks.get('a.com')).toBe('2026-03-05T00:00:00.000Z');
  });
});
