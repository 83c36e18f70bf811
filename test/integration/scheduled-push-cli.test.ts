import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { WorkflowNotFoundError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PushManifest, PushResult } from '../../activities/push/types.ts';
import { openStore } from '../../config/storage.ts';
import { type PushScheduleDetails, type PushScheduleInfo, scheduleIdOf } from '../../library/schedules/service.ts';
import { runIdOf } from '../../workflows/scheduled-push.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';

describe('signal-kit schedule against a real Temporal server', () => {
  const { ctx, cli } = useScheduleEnv('schedule');

  beforeAll(async () => {
    const rows = ['domain', ...Array.from({ length: 12 }, (_, i) => `sched-co${i}.com`)];
    await writeFile(join(ctx.dir, 'watchlist.csv'), `${rows.join('\n')}\n`);
  });

  /** Waits until a workflow with this id exists and returns its result. */
  const resultOf = async (workflowId: string): Promise<PushResult> => {
    for (let i = 0; ; i++) {
      try {
        return (await ctx.env.client.workflow.getHandle(workflowId).result()) as PushResult;
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError) || i > 100) throw error;
        await delay(200);
      }
    }
  };

  it('creates, lists, describes, pauses, unpauses, triggers, runs, shows and resets state, backfills and deletes a push schedule', async () => {
    const { env, dir } = ctx;
    const output = pathToFileURL(join(dir, 'out')).href;
    const watchlist = pathToFileURL(join(dir, 'watchlist.csv')).href;
    const created = await cli(
      'create',
      '--name',
      'nightly',
      '--watchlist',
      watchlist,
      '--output',
      output,
      '--every',
      '1d',
      '--signal-types',
      'news,hiring-trends',
    );
    expect(created).toEqual({
      code: 0,
      out: { name: 'nightly', scheduleId: 'signal-kit-push-nightly', created: true, every: '1d' },
    });
    await expect(
      cli('create', '--name', 'nightly', '--watchlist', watchlist, '--output', output, '--every', '1d'),
    ).rejects.toThrow(/schedule "nightly" already exists/);

    // Temporal lists schedules from its visibility store, which can lag a moment behind create and delete.
    const listedRows = async () =>
      (await cli<PushScheduleInfo[]>('list')).out.map((s) => [s.name, s.scheduleId, s.paused, s.every]);
    await expect
      .poll(listedRows, { timeout: 15_000, interval: 200 })
      .toContainEqual(['nightly', scheduleIdOf('nightly'), false, '1d']);

    const described = await cli<PushScheduleDetails>('describe', 'nightly');
    expect(described.out).toMatchObject({
      name: 'nightly',
      paused: false,
      every: '1d',
      overlap: 'skip',
      taskQueue: env.config().taskQueue,
      push: { name: 'nightly', watchlist, output, signalTypes: ['news', 'hiring-trends'] },
    });
    expect(described.out.nextRuns.length).toBeGreaterThan(0);

    expect((await cli('pause', 'nightly', '--note', 'maintenance')).out).toEqual({ name: 'nightly', paused: true });
    expect((await cli<PushScheduleDetails>('describe', 'nightly')).out).toMatchObject({
      paused: true,
      note: 'maintenance',
    });
    expect((await cli('unpause', 'nightly')).out).toEqual({ name: 'nightly', paused: false });
    expect((await cli<PushScheduleDetails>('describe', 'nightly')).out.paused).toBe(false);

    // Trigger: one run now; its run id and dt= partition come from the schedule's time for it.
    const ledgerBefore = env.sandbox.ledger.total();
    expect((await cli('trigger', 'nightly')).out).toEqual({ name: 'nightly', triggered: true });
    let recent: PushScheduleDetails['recentRuns'] = [];
    for (let i = 0; i < 100 && recent.length === 0; i++) {
      recent = (await cli<PushScheduleDetails>('describe', 'nightly')).out.recentRuns;
      if (recent.length === 0) await delay(200);
    }
    expect(recent.length).toBeGreaterThan(0);
    const action = recent[0]!;
    expect(action.workflowId.startsWith(`${scheduleIdOf('nightly')}-`)).toBe(true);
    const triggered = await resultOf(action.workflowId);
    // Temporal records a scheduled workflow's nominal time to the second (search attribute and workflow id suffix).
    const nominal = new Date(Math.floor(Date.parse(action.scheduledAt) / 1000) * 1000).toISOString();
    expect(action.workflowId).toBe(`${scheduleIdOf('nightly')}-${nominal.replace('.000Z', 'Z')}`);
    expect(triggered).toMatchObject({
      name: 'nightly',
      status: 'completed',
      runId: runIdOf(nominal),
      dt: nominal.slice(0, 10),
    });
    expect(triggered.signals).toBeGreaterThan(0);
    expect(env.sandbox.ledger.total() - ledgerBefore).toBe(triggered.credits);
    const store = openStore(output);
    const manifest = JSON.parse(
      await store.readText(`nightly/signals/dt=${triggered.dt}/run-${triggered.runId}/_manifest.json`),
    ) as PushManifest;
    expect(manifest.counts.signals).toBe(triggered.signals);
    expect(manifest.details).toMatchObject({ filters: { signal_types: ['news', 'hiring-trends'] } });

    // State: every domain's watermark and the last run, as committed by the triggered run.
    const state = await cli<Record<string, unknown>>('state', 'nightly', '--domain', 'sched-co1.com');
    expect(state.out).toMatchObject({
      name: 'nightly',
      committedBy: triggered.runId,
      lastRun: { run_id: triggered.runId, status: 'completed', signals: triggered.signals },
      perDomain: { 'sched-co1.com': { pushedAboveWatermark: 0 } },
    });
    expect((await cli<PushScheduleDetails>('describe', 'nightly')).out.lastRun).toMatchObject({
      run_id: triggered.runId,
    });

    // A run now, waited for: nothing is new at the same clock, so it pays nothing and exits 0.
    const mark = env.sandbox.truth.lastCall();
    const again = await cli<PushResult>('run', 'nightly', '--wait');
    expect(again.code).toBe(0);
    expect(again.out).toMatchObject({ status: 'completed', signals: 0, credits: 0 });
    expect(env.sandbox.truth.calls({ after: mark, path: '/v1/companies/enrich/bulk' })).toHaveLength(1);

    // One run at a time: while a run is in progress (held here at its bulk call), `run` and `run --full-refresh` are
    // refused, whether `schedule run` started it (Temporal refuses a second start of its one workflow id) or the
    // schedule did (its own record of running actions).
    env.sandbox.setFaults({ answerDelayMs: 4_000, answerDelayPaths: ['/v1/companies/enrich/bulk'] });
    const inProgress = async (workflowId: string) => {
      const refusal = { name: 'PushRunInProgressError', push: 'nightly', running: [workflowId] };
      await expect(cli('run', 'nightly')).rejects.toMatchObject(refusal);
      await expect(cli('run', 'nightly', '--full-refresh')).rejects.toMatchObject(refusal);
    };
    const manual = (await cli<{ workflowId: string }>('run', 'nightly')).out.workflowId;
    expect(manual).toBe(`${scheduleIdOf('nightly')}/manual-run`);
    await inProgress(manual);
    await resultOf(manual);
    await cli('trigger', 'nightly');
    let running: string[] = [];
    for (let i = 0; i < 30 && running.length === 0; i++) {
      running = (await cli<PushScheduleDetails>('describe', 'nightly')).out.running;
      if (running.length === 0) await delay(100);
    }
    expect(running).toHaveLength(1);
    await inProgress(running[0]!);
    await resultOf(running[0]!);
    env.sandbox.setFaults({});

    // Reset one domain: the next full run pushes exactly that domain's signals again.
    expect((await cli('reset', 'nightly', '--domain', 'sched-co1.com')).out).toMatchObject({ removed: 1 });
    const refetched = await cli<PushResult>('run', 'nightly', '--wait');
    const co1 = env.sandbox.truth.companySignals(['sched-co1.com'], { signal_types: ['news', 'hiring-trends'] })[0]!;
    expect(refetched.out.signals).toBe(co1.signals.length);

    // Backfill a past window: the signals detected in [from, to) for the watchlist, in their own partition, with
    // what the calls returned after `to` paid for and reported as overlap; the watermarks are not touched.
    const marksBefore = await store.readText('nightly/_watermarks.json');
    const from = '2026-01-09T12:00:00.000Z';
    const to = '2026-01-10T12:00:00.000Z';
    const before = env.sandbox.ledger.total();
    const backfilled = await cli<PushResult>('backfill', 'nightly', '--from', from, '--to', to, '--wait');
    expect(backfilled.code).toBe(0);
    const domains = Array.from({ length: 12 }, (_, i) => `sched-co${i}.com`);
    const filters = { signal_types: ['news', 'hiring-trends'] };
    const inWindow = env.sandbox.truth
      .companySignals(domains, { ...filters, detected_after: from, detected_before: to })
      .flatMap((t) => t.signals.map((s) => s.signal_id));
    const afterFrom = env.sandbox.truth
      .companySignals(domains, { ...filters, detected_after: from })
      .reduce((n, t) => n + t.signals.length, 0);
    expect(inWindow.length).toBeGreaterThan(0);
    expect(backfilled.out).toMatchObject({
      status: 'completed',
      runId: 'backfill-20260109T120000Z-20260110T120000Z',
      dt: '2026-01-09',
      signals: inWindow.length,
      credits: 2 * afterFrom,
      overlapCredits: 2 * (afterFrom - inWindow.length),
    });
    expect(env.sandbox.ledger.total() - before).toBe(2 * afterFrom);
    const windowManifest = JSON.parse(
      await store.readText(`nightly/signals/dt=2026-01-09/run-${backfilled.out.runId}/_manifest.json`),
    ) as PushManifest;
    expect(windowManifest).toMatchObject({ mode: 'backfill', window: { from, to }, watermarks: { committed: false } });
    expect(await store.readText('nightly/_watermarks.json')).toBe(marksBefore);

    expect((await cli('delete', 'nightly')).out).toEqual({ name: 'nightly', deleted: true });
    await expect
      .poll(async () => (await listedRows()).map(([name]) => name), { timeout: 15_000, interval: 200 })
      .not.toContain('nightly');
    await expect(cli('describe', 'nightly')).rejects.toThrow(/no schedule named "nightly"/);
    await expect(cli('trigger', 'nightly')).rejects.toThrow(/no schedule named "nightly"/);
  });
});
