import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushManifest, PushResult } from '../../activities/push/types.ts';
import {
  type PushScheduleDetails,
  type PushScheduleInfo,
  runScheduleCommand,
  scheduleIdOf,
} from '../../cli/commands/schedule.ts';
import { openStore } from '../../connectors/storage/index.ts';
import type { WorkerConfig } from '../../workers/config.ts';
import { runIdOf } from '../../workflows/scheduled-push.ts';
import { type JobEnv, startJobEnv } from '../helpers/job-env.ts';

describe('signal-kit schedule against a real Temporal server', () => {
  let env: JobEnv;
  let config: WorkerConfig;
  let dir: string;
  const now = Date.UTC(2026, 2, 1, 6);

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 5, clock: () => now } });
    await env.startWorker();
    config = env.config();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-schedule-'));
    const rows = ['domain', ...Array.from({ length: 12 }, (_, i) => `sched-co${i}.com`)];
    await writeFile(join(dir, 'watchlist.csv'), `${rows.join('\n')}\n`);
  });
  afterAll(async () => {
    await env?.stop();
  });

  /** Runs `signal-kit schedule ...argv` in process against the test server; returns exit code and parsed output. */
  const cli = async <T = unknown>(...argv: string[]): Promise<{ code: number; out: T }> => {
    const printed: string[] = [];
    const code = await runScheduleCommand(argv, {
      client: env.client,
      temporal: config,
      print: (t) => printed.push(t),
    });
    return { code, out: JSON.parse(printed.join('\n')) as T };
  };

  /** Waits until a workflow with this id exists and returns its result. */
  const resultOf = async (workflowId: string): Promise<PushResult> => {
    for (let i = 0; ; i++) {
      try {
        return (await env.client.workflow.getHandle(workflowId).result()) as PushResult;
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError) || i > 100) throw error;
        await delay(200);
      }
    }
  };

  it('creates, lists, describes, pauses, unpauses, triggers, backfills and deletes a push schedule', async () => {
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

    const listed = await cli<PushScheduleInfo[]>('list');
    expect(listed.out.map((s) => [s.name, s.scheduleId, s.paused, s.every])).toContainEqual([
      'nightly',
      scheduleIdOf('nightly'),
      false,
      '1d',
    ]);

    const described = await cli<PushScheduleDetails>('describe', 'nightly');
    expect(described.out).toMatchObject({
      name: 'nightly',
      paused: false,
      every: '1d',
      overlap: 'skip',
      taskQueue: config.taskQueue,
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

    // Backfill: the run the schedule would have taken at 2026-01-10T00:00Z, keyed by that time. The service shows
    // nothing newer than the watermarks, so it writes no signal and is charged nothing.
    const backfilled = await cli(
      'backfill',
      'nightly',
      '--from',
      '2026-01-09T12:00:00Z',
      '--to',
      '2026-01-10T12:00:00Z',
    );
    expect(backfilled.out).toEqual({
      name: 'nightly',
      backfill: { from: '2026-01-09T12:00:00.000Z', to: '2026-01-10T12:00:00.000Z' },
    });
    const ledgerBeforeBackfill = env.sandbox.ledger.total();
    const past = await resultOf(`${scheduleIdOf('nightly')}-2026-01-10T00:00:00Z`);
    expect(past).toMatchObject({
      status: 'completed',
      runId: '20260110T000000Z',
      dt: '2026-01-10',
      signals: 0,
      credits: 0,
    });
    expect(env.sandbox.ledger.total()).toBe(ledgerBeforeBackfill);
    expect(await store.exists('nightly/signals/dt=2026-01-10/run-20260110T000000Z/_manifest.json')).toBe(true);

    expect((await cli('delete', 'nightly')).out).toEqual({ name: 'nightly', deleted: true });
    expect((await cli<PushScheduleInfo[]>('list')).out.map((s) => s.name)).not.toContain('nightly');
    await expect(cli('describe', 'nightly')).rejects.toThrow(/no schedule named "nightly"/);
    await expect(cli('trigger', 'nightly')).rejects.toThrow(/no schedule named "nightly"/);
  });
});
