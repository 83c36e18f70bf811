/** `signal-kit schedule create --kind enrich` (the nightly CRM sync) and its subcommands, against real servers. */
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import { openStore } from '../../config/storage.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import type { PushScheduleDetails, PushScheduleInfo } from '../../library/schedules/service.ts';
import { until } from '../../testkit/kill-drill.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { readCsv, writeExport } from '../promises/crm-sync-helpers.ts';
import { callsTo, chargedSince, PATHS } from '../promises/oracle.ts';

describe('signal-kit schedule --kind enrich', () => {
  const { ctx, cli } = useScheduleEnv('crm-sync-schedule');

  it('creates a nightly CRM sync, runs a night, runs the next one for nothing, shows its state and deletes it', async () => {
    const { env, dir } = ctx;
    const records = Array.from({ length: 150 }, (_, i) => ({
      id: `0015g0000${String(i).padStart(4, '0')}`,
      website: `https://www.cli-sync-co${i}.com`,
      industry: i % 2 ? 'Software' : 'Retail',
    }));
    const input = await writeExport(dir, records);
    const output = `${new URL('out', `${input.replace(/[^/]+$/, '')}`).href}`;
    const created = await cli(
      ...['create', '--name', 'crm-nightly', '--kind', 'enrich', '--input', input, '--output', output],
      ...['--every', '1d', '--paused', '--limit', '5', '--keep-columns', 'Industry', '--format', 'parquet'],
    );
    expect(created).toEqual({ code: 0, out: expect.objectContaining({ name: 'crm-nightly', created: true }) });
    const described = await cli<{ push: Record<string, unknown> }>('describe', 'crm-nightly');
    expect(described.out.push).toMatchObject({ kind: 'enrich', input, limit: 5, keepColumns: ['Industry'] });
    const listed = await cli<{ name: string }[]>('list');
    expect(listed.out.map((s) => s.name)).toContain('crm-nightly');

    const mark = env.sandbox.truth.lastCall();
    const first = await cli<SyncResult>('run', 'crm-nightly', '--wait');
    expect(first.code).toBe(0);
    expect(first.out).toMatchObject({ status: 'completed', records: { total: 150, new: 150, gone: 0 } });
    const truth = env.sandbox.truth.companySignals(records.map((_, i) => `cli-sync-co${i}.com`));
    const ideal = truth.reduce((sum, t) => sum + 2 * t.signals.slice(0, 5).length, 0);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal);
    const store = openStore(output);
    const rows = await readCsv(store, first.out.rowsUrl);
    expect(rows.map((r) => r['record_id']).sort()).toEqual(records.map((r) => r.id).sort());
    expect(rows.every((r) => r['Industry'] !== undefined)).toBe(true);
    // The night's manifest as the contract describes it (contract/manifest-schemas.ts), every field checked.
    const manifest = SyncManifestSchema.parse(
      JSON.parse(await store.readText(first.out.manifestUrl.slice(store.url.length + 1))),
    );
    expect(manifest.parts.map((p) => p.format).sort()).toEqual(['csv', 'csv', 'parquet']);

    // The next night, nothing new: no credit, one call per 100 companies.
    const mark2 = env.sandbox.truth.lastCall();
    const second = await cli<SyncResult>('run', 'crm-nightly', '--wait');
    expect(second.out).toMatchObject({ status: 'completed', records: { total: 150, new: 0, changed: 0 } });
    expect(chargedSince(env.sandbox, mark2)).toBe(0);
    expect(callsTo(env.sandbox, PATHS.enrichBulk, mark2)).toHaveLength(2);
    expect((await readCsv(store, second.out.changesUrl)).length).toBe(0);

    const state = await cli<{ companies: number; committedBy: string }>('state', 'crm-nightly');
    expect(state.out).toMatchObject({ companies: 150, committedBy: second.out.runId });
    expect((await cli('pause', 'crm-nightly')).code).toBe(0);
    expect((await cli('delete', 'crm-nightly')).code).toBe(0);
  });

  /** The result of a workflow once it exists (a schedule starts it a moment after it is asked to). */
  const resultOf = async (workflowId: string): Promise<SyncResult> => {
    await until(`workflow ${workflowId}`, async () => {
      try {
        await ctx.env.client.workflow.getHandle(workflowId).describe();
        return true;
      } catch {
        return false;
      }
    });
    return (await ctx.env.client.workflow.getHandle(workflowId).result()) as SyncResult;
  };

  it('names its schedule, its runs and its refusal as a sync (signal-kit-sync-*, SyncRunInProgressError)', async () => {
    const { env, dir } = ctx;
    const input = await writeExport(
      dir,
      Array.from({ length: 150 }, (_, i) => ({ id: `ids-${i}`, website: `ids-co${i}.com`, industry: 'x' })),
    );
    const output = new URL('ids-out', input.replace(/[^/]+$/, '')).href;
    const created = await cli<{ scheduleId: string }>(
      ...['create', '--name', 'crm-ids', '--kind', 'enrich', '--input', input, '--output', output],
      ...['--every', '1d', '--paused', '--limit', '5'],
    );
    expect(created.out.scheduleId).toBe('signal-kit-sync-crm-ids');
    // `list` reads Temporal's visibility store, which may lag a moment behind `create`.
    const listed = async () =>
      (await cli<PushScheduleInfo[]>('list')).out.find((s) => s.name === 'crm-ids')?.scheduleId;
    await expect.poll(listed, { timeout: 15_000, interval: 200 }).toBe('signal-kit-sync-crm-ids');
    // The name is the schedule's whatever its kind: a push of the same name is refused.
    await expect(
      cli('create', '--name', 'crm-ids', '--watchlist', input, '--output', output, '--every', '1d'),
    ).rejects.toThrow(/already exists \(signal-kit-sync-crm-ids\)/);

    // One night at a time, held at its bulk calls: `run` while `schedule run`'s night or the schedule's is running
    // is refused as a sync's, naming the night in progress.
    env.sandbox.setFaults({ answerDelayMs: 3_000, answerDelayPaths: [PATHS.enrichBulk] });
    const refused = (running: string) => ({ name: 'SyncRunInProgressError', sync: 'crm-ids', running: [running] });
    const manual = (await cli<{ workflowId: string }>('run', 'crm-ids')).out.workflowId;
    expect(manual).toBe('signal-kit-sync-crm-ids/manual-run');
    await expect(cli('run', 'crm-ids')).rejects.toMatchObject(refused(manual));
    expect((await resultOf(manual)).status).toBe('completed');
    await cli('trigger', 'crm-ids');
    let running: string[] = [];
    await until('the triggered night', async () => {
      running = (await cli<PushScheduleDetails>('describe', 'crm-ids')).out.running;
      return running.length > 0;
    });
    expect(running[0]).toMatch(/^signal-kit-sync-crm-ids-\d{4}-/);
    await expect(cli('run', 'crm-ids')).rejects.toMatchObject(refused(running[0]!));
    expect((await resultOf(running[0]!)).status).toBe('completed');
    env.sandbox.setFaults({});
    expect((await cli('delete', 'crm-ids')).code).toBe(0);
  });

  it('keeps a sync schedule created by the last release (signal-kit-push-<name>) starting its nights', async () => {
    const { env, dir } = ctx;
    const input = await writeExport(
      dir,
      Array.from({ length: 20 }, (_, i) => ({ id: `old-${i}`, website: `old-co${i}.com`, industry: 'x' })),
    );
    const output = new URL('legacy-out', input.replace(/[^/]+$/, '')).href;
    const c = env.config();
    // What `schedule create --kind enrich` of the last release made: the push prefix, its action's workflow id too.
    await env.client.schedule.create({
      scheduleId: 'signal-kit-push-crm-legacy',
      spec: { intervals: [{ every: '1d' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'crmSync',
        workflowId: 'signal-kit-push-crm-legacy',
        taskQueue: c.taskQueue,
        args: [{ name: 'crm-legacy', kind: 'enrich', input, output, limit: 5, ...c }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { 'signal-kit': 'crm-sync', name: 'crm-legacy' },
      state: { paused: true },
    });
    const described = await cli<PushScheduleDetails>('describe', 'crm-legacy');
    expect(described.out).toMatchObject({ name: 'crm-legacy', scheduleId: 'signal-kit-push-crm-legacy' });
    await cli('trigger', 'crm-legacy');
    let recent: PushScheduleDetails['recentRuns'] = [];
    await until('the legacy schedule to start its night', async () => {
      recent = (await cli<PushScheduleDetails>('describe', 'crm-legacy')).out.recentRuns;
      return recent.length > 0;
    });
    expect(recent[0]!.workflowId).toMatch(/^signal-kit-push-crm-legacy-/);
    const night = await resultOf(recent[0]!.workflowId);
    expect(night).toMatchObject({ status: 'completed', records: { total: 20 } });
    const manual = await cli<SyncResult>('run', 'crm-legacy', '--wait');
    expect(manual.out).toMatchObject({ status: 'completed', records: { total: 20, new: 0 } });
    const state = await cli<{ committedBy: string }>('state', 'crm-legacy');
    expect(state.out.committedBy).toBe(manual.out.runId);
    await expect(
      cli('create', '--name', 'crm-legacy', '--kind', 'enrich', '--input', input, '--output', output, '--every', '1d'),
    ).rejects.toThrow(/already exists \(signal-kit-push-crm-legacy\)/);
    expect((await cli('delete', 'crm-legacy')).code).toBe(0);
    await expect(cli('describe', 'crm-legacy')).rejects.toThrow(/no schedule named "crm-legacy"/);
  });

  it('refuses a flag the kind does not take, and an export of a type no job reads', async () => {
    await expect(
      cli(
        'create',
        '--name',
        'x',
        '--kind',
        'enrich',
        '--input',
        'a.csv',
        '--output',
        '/tmp/o',
        '--every',
        '1d',
        '--since',
        '2026-01-01',
      ),
    ).rejects.toThrow(/--since does not apply to --kind enrich/);
    await expect(
      cli('create', '--name', 'x', '--kind', 'enrich', '--input', 'a.pdf', '--output', '/tmp/o', '--every', '1d'),
    ).rejects.toThrow(/--input must be a .csv, .tsv or .txt, .xlsx, or .jsonl/);
    await expect(
      cli('create', '--name', 'x', '--kind', 'enrich', '--input', 'a.csv', '--sheet', 'S', '--output', '/tmp/o'),
    ).rejects.toThrow(/--sheet applies only to an .xlsx --input/);
  });
});
