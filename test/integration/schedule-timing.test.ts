/**
 * When a schedule runs (issue 36.7): `--at HH:MM[:SS] --timezone Europe/Berlin` and `--cron` are Temporal calendar
 * specs that fire at their wall-clock time on the real Temporal dev server (asserted on what fired: the nominal time
 * of the run the schedule took, and the night it ran); `describe` shows them as given. `list` and `describe` show
 * the runs `schedule run` started among the recent runs.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import type { RecentRun } from '../../library/schedules/service.ts';
import { runIdOf } from '../../workflows/push-ids.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { writeExport } from '../promises/crm-sync-helpers.ts';

const records = Array.from({ length: 4 }, (_, i) => ({
  id: `0015g00000${String(i).padStart(3, '0')}`,
  website: `https://www.timing-co${i}.com`,
  industry: 'Software',
}));

/** `instant`'s wall-clock time of day in `zone`, as `--at` takes it (HH:MM:SS). */
function wallClock(instant: Date, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(instant);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('hour')}:${part('minute')}:${part('second')}`;
}

describe('a schedule runs at the time of day it is given', () => {
  const { ctx, cli, createNightly: create } = useScheduleEnv('schedule-timing');

  async function createNightly(name: string, timing: string[]) {
    const input = await writeExport(ctx.dir, records);
    const output = pathToFileURL(join(ctx.dir, `${name}-out`)).href;
    const created = await create(name, { input, output, timing, flags: ['--limit', '2'] });
    expect(created.code).toBe(0);
    return created.out;
  }

  /** The first run the schedule itself took, once it has taken one (polled; no bound on how long it takes). */
  async function firstTaken(name: string): Promise<RecentRun> {
    for (;;) {
      const described = await cli<{ recentRuns: RecentRun[] }>('describe', name);
      const taken = described.out.recentRuns.find((run) => run.by === 'schedule');
      if (taken) return taken;
      await sleep(500);
    }
  }

  it('--at in Europe/Berlin and a per-minute --cron fire at their wall-clock times, each a night', async () => {
    // A whole second far enough ahead for the schedule to be created before it.
    const due = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000);
    const at = wallClock(due, 'Europe/Berlin');
    expect(await createNightly('berlin-nightly', ['--at', at, '--timezone', 'Europe/Berlin'])).toMatchObject({
      at,
      timezone: 'Europe/Berlin',
    });
    const cronFrom = Date.now();
    await createNightly('every-minute', ['--cron', '* * * * *']);
    const described = await cli<Record<string, unknown>>('describe', 'berlin-nightly');
    expect(described.out).toMatchObject({ at, timezone: 'Europe/Berlin', kind: 'enrich' });
    expect(described.out).not.toHaveProperty('every');
    expect(Date.parse((described.out['nextRuns'] as string[])[0]!)).toBe(due.getTime());

    const [berlin, minute] = await Promise.all([firstTaken('berlin-nightly'), firstTaken('every-minute')]);
    expect(berlin.scheduledAt).toBe(due.toISOString());
    // The first whole minute after the cron schedule was created.
    expect(minute.scheduledAt).toBe(new Date(Math.ceil(cronFrom / 60_000) * 60_000).toISOString());

    // What fired is a night of the schedule, named by its nominal time.
    for (const run of [berlin, minute]) {
      const night = (await ctx.env.client.workflow.getHandle(run.workflowId).result()) as SyncResult;
      expect(night).toMatchObject({ status: 'completed', runId: runIdOf(run.scheduledAt) });
    }
    for (const name of ['berlin-nightly', 'every-minute']) expect((await cli('delete', name)).code).toBe(0);
  }, 240_000);

  it('list and describe show the nights `schedule run` started among the recent runs', async () => {
    await createNightly('manual-nights', ['--every', '1d', '--paused']);
    for (let night = 0; night < 2; night++) expect((await cli('run', 'manual-nights', '--wait')).code).toBe(0);
    // Temporal's visibility store can lag about a second behind a run's start.
    let manual: RecentRun[] = [];
    while (manual.length < 2) {
      const listed = await cli<{ name: string; recentRuns: RecentRun[] }[]>('list');
      manual = listed.out.find((s) => s.name === 'manual-nights')?.recentRuns ?? [];
      if (manual.length < 2) await sleep(250);
    }
    expect(manual).toEqual([
      expect.objectContaining({ by: 'schedule run', workflowId: 'signal-kit-sync-manual-nights/manual-run' }),
      expect.objectContaining({ by: 'schedule run', workflowId: 'signal-kit-sync-manual-nights/manual-run' }),
    ]);
    const described = await cli<{ recentRuns: RecentRun[] }>('describe', 'manual-nights');
    expect(described.out.recentRuns).toHaveLength(2);
  });
});
