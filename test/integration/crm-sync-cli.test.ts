/** `signal-kit schedule create --kind enrich` (the nightly CRM sync) and its subcommands, against real servers. */
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import { openStore } from '../../config/storage.ts';
import { SyncManifestSchema } from '../../contract/manifest-schemas.ts';
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
