/**
 * `signal-kit load` of a CRM sync's nights (the CLI in a child process) into a real PostgreSQL and a real DuckDB file:
 * a night, then the next night over it, each loaded twice. Read back with SQL of each database (never the kit's own
 * reader), against the last night's `rows.csv` as DuckDB's CSV reader parses it: every record of the last night once,
 * with its signal count; the records the last night's export lost are there once too, marked gone, never deleted.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';
import { runCli } from '../helpers/cli.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { type ExportRecord, writeExport } from '../promises/crm-sync-helpers.ts';

const record = (i: number): ExportRecord => ({
  id: `0015g0000${String(i).padStart(4, '0')}`,
  website: `https://www.load-sync-co${i}.com`,
  industry: i % 2 ? 'Software' : 'Retail',
});
/** Night 1: records 0–39; night 2: 10–49 (0–9 gone from the export, 40–49 new). */
const NIGHT_1 = Array.from({ length: 40 }, (_, i) => record(i));
const NIGHT_2 = Array.from({ length: 40 }, (_, i) => record(i + 10));
const GONE = NIGHT_1.slice(0, 10).map((r) => r.id);

type Row = { record_id: string; signal_count: number | null; gone: boolean };

describe('signal-kit load of sync nights into PostgreSQL and DuckDB', () => {
  const { ctx, cli } = useScheduleEnv('load-sync');
  let server: PostgresServer;
  let pgUrl: string;
  let db: pg.Client;
  const nights: SyncResult[] = [];
  /** The last night's rows.csv as DuckDB's CSV reader parses it: record id → signal count. */
  let truth: Map<string, number | null>;

  const load = (manifest: string, into: string) =>
    runCli(
      ['load', '--manifest', manifest, '--into', into],
      { cwd: ctx.dir, env: process.env as Record<string, string>, timeout: 120_000 },
      'throw',
    );

  beforeAll(async () => {
    server = await startPostgres();
    pgUrl = await server.createDatabase('load_sync');
    db = new pg.Client({ connectionString: pgUrl });
    await db.connect();
    const input = await writeExport(ctx.dir, NIGHT_1);
    const output = new URL('out', input.replace(/[^/]+$/, '')).href;
    const created = await cli(
      ...['create', '--name', 'nightly', '--kind', 'enrich', '--input', input, '--output', output],
      ...['--every', '1d', '--paused', '--limit', '5', '--format', 'parquet'],
    );
    expect(created.code).toBe(0);
    for (const records of [NIGHT_1, NIGHT_2]) {
      await writeExport(ctx.dir, records);
      const night = await cli<SyncResult>('run', 'nightly', '--wait');
      expect(night.out).toMatchObject({ status: 'completed' });
      nights.push(night.out);
    }
    expect(nights[1]?.records).toMatchObject({ total: 40, new: 10, gone: 10 });
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    const read = await duck.runAndReadAll(
      `select "Id" as id, "Signal_Count__c" as n from read_csv('${fileURLToPath(nights[1]?.rowsUrl as string)}', header = true, all_varchar = true)`,
    );
    truth = new Map(
      (read.getRowObjectsJS() as { id: string; n: string | null }[]).map((r) => [
        r.id,
        r.n === null ? null : Number(r.n),
      ]),
    );
    duck.closeSync();
    expect([...truth.keys()].sort()).toEqual(NIGHT_2.map((r) => r.id).sort());
    expect([...truth.values()].some((n) => (n ?? 0) > 0)).toBe(true);
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
  });

  /** Loads night 1 twice, then night 2 twice, into `into`; each load exits 0. */
  async function loadNights(into: string) {
    const reports = [];
    for (const night of [nights[0], nights[0], nights[1], nights[1]]) {
      const result = await load(night?.manifestUrl as string, into);
      expect(result.code, result.stderr).toBe(0);
      reports.push(
        JSON.parse(result.stdout) as {
          tables: { table: string; inserted: number; updated: number; marked_gone: number }[];
        },
      );
    }
    return reports;
  }

  /** Every record of the last night once, with rows.csv's signal count; the gone ones once, marked. */
  function expectLastNight(rows: Row[]) {
    const byId = new Map<string, Row[]>();
    for (const row of rows) byId.set(row.record_id, [...(byId.get(row.record_id) ?? []), row]);
    expect([...byId.values()].filter((versions) => versions.length > 1)).toEqual([]);
    const current = rows.filter((r) => !r.gone);
    expect(current.map((r) => r.record_id).sort()).toEqual([...truth.keys()].sort());
    for (const row of current)
      expect([row.record_id, row.signal_count]).toEqual([row.record_id, truth.get(row.record_id)]);
    expect(
      rows
        .filter((r) => r.gone)
        .map((r) => r.record_id)
        .sort(),
    ).toEqual([...GONE].sort());
  }

  it('PostgreSQL: the last night once per record, its signal counts as rows.csv, the lost records marked gone', async () => {
    const reports = await loadNights(pgUrl);
    expect(reports.map((r) => r.tables[0]?.inserted)).toEqual([40, 0, 10, 0]);
    expect(reports.map((r) => r.tables[0]?.updated)).toEqual([0, 0, 30, 0]);
    expect(reports.map((r) => r.tables[0]?.marked_gone)).toEqual([0, 0, 10, 0]);
    const { rows } = await db.query<Row>(
      `select record_id, signal_count, gone_at is not null as gone from signal_kit_sync_enrich_rows where sync_name = 'nightly'`,
    );
    expectLastNight(rows);
    // Four loads, each a child process.
  }, 240_000);

  it('DuckDB: the same, read back by DuckDB from the file', async () => {
    const file = join(ctx.dir, 'warehouse.duckdb');
    const reports = await loadNights(`duckdb://${file}`);
    expect(reports.map((r) => r.tables[0]?.inserted)).toEqual([40, 0, 10, 0]);
    expect(reports.map((r) => r.tables[0]?.updated)).toEqual([0, 0, 30, 0]);
    expect(reports.map((r) => r.tables[0]?.marked_gone)).toEqual([0, 0, 10, 0]);
    const instance = await DuckDBInstance.create(file);
    const duck = await instance.connect();
    const read = await duck.runAndReadAll(
      `select record_id, signal_count, gone_at is not null as gone from signal_kit_sync_enrich_rows where sync_name = 'nightly'`,
    );
    const rows = read.getRowObjectsJS() as Row[];
    duck.closeSync();
    instance.closeSync();
    expectLastNight(rows);
    // Four loads, each a child process.
  }, 240_000);
});
