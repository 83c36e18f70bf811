/**
 * Two attempts of one push batch at once (Temporal starts a second when the first one's heartbeat lapses: a paused
 * worker, a restarted Temporal server), and an attempt whose call was lost on the wire: every call the service
 * charged is in the run's saved answers or counted in its manifest's `unsaved_answers`, as for a job. What the
 * service charged is what its answers said, counted by the fake service here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PartSpool } from '../../../activities/paid/spool.ts';
import { fetchPushBatch } from '../../../activities/push/fetch.ts';
import { finalizePushRun } from '../../../activities/push/finalize.ts';
import { pushBatchKey, pushManifestKey, pushPartKey } from '../../../activities/push/layout.ts';
import type { StoredPlan } from '../../../activities/push/plan.ts';
import { recoverKeptAnswers } from '../../../activities/push/recover.ts';
import type { PushManifest, PushRunRef } from '../../../activities/push/types.ts';
import { planKey } from '../../../activities/run/scheduled-layout.ts';
import { type AnswerWait, MAX_ANSWER_WAIT_MS } from '../../../activities/run/unsaved-answers.ts';
import { commitWatermarkState, readWatermarkState } from '../../../activities/state/watermarks.ts';
import { openStore } from '../../../config/storage.ts';
import type { SignalClient } from '../../../connectors/signal-api/client.ts';
import type { EnrichCompaniesParams } from '../../../connectors/signal-api/index.ts';
import type { CallOptions } from '../../../connectors/signal-api/types.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import { heldCalls } from '../../helpers/held-calls.ts';
import { refusingStore } from '../../helpers/refusing-store.ts';
import { oneSignalAnswer } from './one-signal.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-push-race-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

const filters = { limit: 500 };

/** A run of one batch over `domains`, planned. */
async function plannedRun(domains: string[]): Promise<{ store: Store; run: PushRunRef }> {
  const store = openStore(join(root, `out-${runs++}`));
  const run: PushRunRef = { name: 'p', output: store.url, runId: '20260306T000000Z', date: '2026-03-06' };
  const plan: StoredPlan = {
    rows: domains.length,
    distinct: domains.length,
    duplicates: 0,
    invalid: 0,
    mixed: 0,
    batches: 1,
    groups: 1,
    watermarksFrom: null,
    watchlist: 'file:///w.csv',
    since: null,
    planned_at: '2026-03-06T00:00:00.000Z',
    invalid_rows: [],
  };
  await store.writeText(planKey(run), JSON.stringify(plan));
  const batch = { index: 0, round: 0, detected_after: null, limit: 500, domains };
  await store.writeText(
    pushBatchKey(run, 0),
    JSON.stringify({ ...batch, domains: domains.map((domain) => ({ domain, start: null, through: null })) }),
  );
  return { store, run };
}

/**
 * A bulk service whose answers wait until the test releases them (in arrival order), each domain one signal (2
 * credits); `charged` is what the answers it sent said they cost.
 */
function heldService() {
  const held = heldCalls();
  const client = {
    async enrichCompanies(params: EnrichCompaniesParams, call?: CallOptions) {
      await held.hold(call);
      const credits = 2 * params.domains.length;
      held.state.charged += credits;
      return {
        results: params.domains.map(oneSignalAnswer),
        summary: { requested: params.domains.length, ok: 0, not_found: 0, error: 0, signals: params.domains.length },
        credits,
      };
    },
  } as unknown as SignalClient;
  return { client, ...held };
}

/** Finalizes the run; `wait` is how it waits for answers still on their way (default: as a worker would). */
async function finalized(store: Store, run: PushRunRef, wait: AnswerWait = {}): Promise<PushManifest> {
  const request = {
    run,
    watchlist: 'file:///w.csv',
    status: 'completed' as const,
    startedAt: '2026-03-06T00:00:00.000Z',
    scheduledAt: '2026-03-06T00:00:00.000Z',
    rounds: [],
  };
  await finalizePushRun(store, request, wait);
  return JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
}

describe('a push batch fetched by two attempts at once', () => {
  it('saves the first answer to arrive and counts the other with the credits the service said', async () => {
    const { store, run } = await plannedRun(['a.com', 'b.com', 'c.com']);
    const service = heldService();
    // Attempt 1's heartbeat lapsed while its answer was on its way: Temporal started attempt 2.
    const first = fetchPushBatch(service.client, store, { run, index: 0, filters }, { attempt: 1 });
    await service.held(1);
    const second = fetchPushBatch(service.client, store, { run, index: 0, filters }, { attempt: 2 });
    await service.held(2);
    service.waiting[1]!();
    expect(await second).toMatchObject({ reused: false, counts: { lines: 3, credits: 6 } });
    service.waiting[0]!();
    // The late answer does not replace the saved one: the batch is answered by what attempt 2 saved.
    expect(await first).toMatchObject({ reused: true, counts: { lines: 3, credits: 6 } });

    const manifest = await finalized(store, run);
    expect(service.state.charged).toBe(12);
    expect(manifest.credits_charged).toBe(service.state.charged);
    expect(manifest.unsaved_answers).toEqual({ credits: 6, unknown_calls: 0 });
    expect(manifest.counts.signals).toBe(3);
  });

  it('counts a call whose answer never came as unknown once another attempt saved the batch', async () => {
    const { store, run } = await plannedRun(['a.com', 'b.com']);
    const service = heldService();
    // Attempt 1 sent its call and its worker stopped (SIGKILL): its answer is never read.
    void fetchPushBatch(service.client, store, { run, index: 0, filters }, { attempt: 1 });
    await service.held(1);
    const second = fetchPushBatch(service.client, store, { run, index: 0, filters }, { attempt: 2 });
    await service.held(2);
    service.waiting[1]!();
    await second;

    // Finalized once the dead call can no longer be answered (its timeout is behind the clock).
    const manifest = await finalized(store, run, { now: () => Date.now() + MAX_ANSWER_WAIT_MS + 600_000 });
    expect(manifest.credits_charged).toBe(4);
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 1 });
  });

  it('sends nothing and leaves no marker for an attempt cancelled before its call', async () => {
    const { store, run } = await plannedRun(['a.com']);
    const service = heldService();
    const cancel = new AbortController();
    cancel.abort(new Error('heartbeat timed out'));
    await expect(
      fetchPushBatch(service.client, store, { run, index: 0, filters }, { attempt: 1, signal: cancel.signal }),
    ).rejects.toThrow('heartbeat timed out');
    expect(service.state.calls).toBe(0);
    const manifest = await finalized(store, run);
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
  });
});

describe('an answer the output refused', () => {
  /** A run whose only batch was answered and refused for good: its answer waits in `spool`; the run is finalized. */
  async function refusedRun(spool: PartSpool) {
    const { store, run } = await plannedRun(['a.com', 'b.com']);
    const service = heldService();
    const refusing = refusingStore(store, { refused: (key) => key.includes('/signals/') && key.includes('part-') });
    const fetching = fetchPushBatch(service.client, refusing, { run, index: 0, filters }, { attempt: 1, spool });
    await service.held(1);
    service.waiting[0]!();
    await expect(fetching).rejects.toThrow(/refused \(ENOSPC\)/);
    const stopped = await finalized(store, run);
    expect(stopped.unsaved_answers).toEqual({ credits: 4, unknown_calls: 0 });
    return { store, run, service };
  }

  it('is finalized into the stopped run by the next run when that run committed the watermarks last', async () => {
    const spool = new PartSpool(join(root, `spool-${runs}`));
    const { store, run } = await refusedRun(spool);
    const next = { ...run, runId: '20260307T000000Z', date: '2026-03-07' };
    expect(await recoverKeptAnswers(store, { run: next, filters }, spool)).toEqual([run.runId]);
    const manifest = JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
    expect(manifest).toMatchObject({ status: 'completed', credits_charged: 4, counts: { signals: 2 } });
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
    expect(Object.keys(Object.fromEntries((await readWatermarkState(store, 'p')).marks))).toEqual(['a.com', 'b.com']);
  });

  it.each([
    ['another day', { dt: '2026-01-01' }],
    ["another push's", { name: 'q' }],
    ['another run', { run_id: '20260101T000000Z' }],
    [
      'a part outside its folder',
      { parts: [{ key: 'file:///etc/hostname', lines: 1, bytes: 3, sha256: '0'.repeat(64) }] },
    ],
  ])(
    "is not finalized from a manifest planted in the run's place naming %s: it is not that run's",
    async (_name, over) => {
      const spool = new PartSpool(join(root, `spool-${runs}`));
      const { store, run } = await refusedRun(spool);
      const real = JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
      await store.writeText(pushManifestKey(run), JSON.stringify({ ...real, ...over }));
      const next = { ...run, runId: '20260309T000000Z', date: '2026-03-09' };
      expect(await recoverKeptAnswers(store, { run: next, filters }, spool)).toEqual([]);
      // Nothing written where the planted manifest pointed, and the run's own manifest left as planted.
      const keys: string[] = [];
      for await (const info of store.list('')) keys.push(info.key);
      expect(keys.filter((key) => key.endsWith('_manifest.json'))).toEqual([pushManifestKey(run)]);
      expect(JSON.parse(await store.readText(pushManifestKey(run)))).toMatchObject(over);
    },
  );

  it('is published but not finalized into an older run: a later run committed the watermarks since', async () => {
    const spool = new PartSpool(join(root, `spool-${runs}`));
    const { store, run } = await refusedRun(spool);
    await commitWatermarkState(store, 'p', 'later', new Map(), { lastRun: { ...lastRunOf(run), run_id: 'later' } });
    const next = { ...run, runId: '20260308T000000Z', date: '2026-03-08' };
    expect(await recoverKeptAnswers(store, { run: next, filters }, spool)).toEqual([]);
    expect(await store.exists(pushPartKey(run, 0))).toBe(true);
    const manifest = JSON.parse(await store.readText(pushManifestKey(run))) as PushManifest;
    expect(manifest.unsaved_answers).toEqual({ credits: 4, unknown_calls: 0 });
  });
});

/** The state's record of `run` as its last committing run. */
function lastRunOf(run: PushRunRef) {
  return {
    run_id: run.runId,
    status: 'completed',
    mode: 'incremental',
    manifest: pushManifestKey(run),
    finished_at: '2026-03-06T00:00:00.000Z',
    signals: 0,
    credits: 0,
    overlap_credits: 0,
    calls: 0,
    incomplete: 0,
    incomplete_domains: [],
  };
}
