/**
 * The load promise, held to the sandbox's truth: an enrich job (run with `--format parquet,csv`, so its tables come
 * from Parquet) and two runs of a scheduled push (the second a full refresh a month later) are each loaded into
 * PostgreSQL from their manifests on S3, then into a DuckDB file, which holds the same. The signals table then holds
 * every signal the service shows for what was asked, once; the rows table one row per company; the newer run's
 * versions replace the older ones; and loading older manifests again changes nothing.
 */
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { runCli } from '../helpers/cli.ts';
import { runJob } from './helpers.ts';
import { enrichIdeal, newSignals } from './oracle.ts';
import { DAY, FIRST_RUN_AT, runPush, sorted, writeWatchlist } from './push-helpers.ts';

const ENRICH_LIMIT = 5;
const PUSH_LIMIT = 100;

interface LoadReport {
  tables: {
    table: string;
    from: string;
    format?: string;
    rows: number;
    inserted: number;
    updated: number;
    unchanged: number;
  }[];
}

describe('load keeps its promises: enrich and two push runs into PostgreSQL, against the sandbox truth', () => {
  let env: JobEnv;
  let server: PostgresServer;
  let db: pg.Client;
  let into: string;
  let dir: string;
  let now = FIRST_RUN_AT;
  const domains = Array.from({ length: 60 }, (_, i) => `load-promise-co${i}.com`);

  const load = async (manifest: string, destination = into): Promise<LoadReport> => {
    const result = await runCli(
      ['load', '--manifest', manifest, '--into', destination],
      { cwd: dir, env: process.env as Record<string, string>, timeout: 60_000 },
      'throw',
    );
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as LoadReport;
  };
  const query = async <T extends pg.QueryResultRow>(sql: string) => (await db.query<T>(sql)).rows;

  beforeAll(async () => {
    [env, server] = await Promise.all([
      startJobEnv({ s3: true, sandbox: { seed: 29, clock: () => now } }),
      startPostgres(),
    ]);
    into = await server.createDatabase('promise');
    db = new pg.Client({ connectionString: into });
    await db.connect();
    await env.startWorker();
    await env.createBuckets('load-promise');
    dir = await tempDir('load-promise');
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
    await env?.stop();
    await removeTempDirs();
  });

  it('every signal once, one row per company, the newer run replaces the older, reloads change nothing', async () => {
    const output = 's3://load-promise/out';
    const watchlist = await writeWatchlist(dir, ['domain', ...domains]);
    const since = new Date(now - 45 * DAY).toISOString();

    // 1. An enrich job over the watchlist's domains, with its flat tables as Parquet and CSV (no JSONL tables).
    const enrichTruth = enrichIdeal(env.sandbox, domains, { limit: ENRICH_LIMIT });
    const enrich: JobResult = await runJob<Omit<BulkEnrichInput, 'taskQueue' | 'apiTaskQueue'>>(env, 'bulkEnrich', {
      jobId: 'load-promise-enrich',
      input: watchlist,
      output,
      options: { limit: ENRICH_LIMIT },
      formats: ['parquet', 'csv'],
    });
    expect(enrich.status).toBe('completed');
    const enrichReport = await load(enrich.manifestUrl);
    expect(enrichReport.tables.map((t) => [t.table, t.from, t.format])).toEqual([
      ['signal_kit_enrich_rows', 'table', 'parquet'],
      ['signal_kit_signals', 'table', 'parquet'],
      ['signal_kit_invalid', 'table', 'parquet'],
    ]);
    // Every signal the service answered for the watchlist, once, under its company and at its time (a timestamptz).
    const truthOf = new Map(
      enrichTruth.domains.flatMap((d) =>
        d.signals
          .slice(0, ENRICH_LIMIT)
          .map((s) => [s.signal_id, { domain: d.domain, at: Date.parse(s.detected_at) }] as const),
      ),
    );
    const enrichSignals = await query<{ signal_id: string; domain: string; detected_at: Date }>(
      'select signal_id, domain, detected_at from signal_kit_signals',
    );
    expect(sorted(enrichSignals.map((row) => row.signal_id))).toEqual(
      sorted([...enrichTruth.signalIds.values()].flat()),
    );
    for (const row of enrichSignals) {
      const truth = truthOf.get(row.signal_id);
      expect({ domain: row.domain, at: row.detected_at.getTime() }, row.signal_id).toEqual(truth);
    }

    // 2. The push's first run, and 3. a full refresh a month later: everything since `since` again, and what is new.
    const push = { name: 'nightly', watchlist, output, since, limit: PUSH_LIMIT };
    const first = await runPush(env, 'load-promise-push-1', { ...push, runAt: new Date(now).toISOString() });
    const firstTruth = newSignals(env.sandbox, domains, { detected_after: since });
    expect(first.status).toBe('completed');
    const firstReport = await load(first.manifestUrl);
    expect(firstReport.tables.map((t) => [t.table, t.from])).toEqual([['signal_kit_signals', 'lines']]);
    now += 30 * DAY;
    // This run also writes its flat signals table: the first run loads from its output lines, this one from the table.
    const second = await runPush(env, 'load-promise-push-2', {
      ...push,
      fullRefresh: true,
      formats: ['jsonl'],
      runAt: new Date(now).toISOString(),
    });
    const secondTruth = newSignals(env.sandbox, domains, { detected_after: since });
    expect(second.status).toBe('completed');
    expect(secondTruth.ids.length).toBeGreaterThan(firstTruth.ids.length);
    const secondReport = await load(second.manifestUrl);
    expect(secondReport.tables.map((t) => [t.table, t.from, t.format])).toEqual([
      ['signal_kit_signals', 'table', 'jsonl'],
    ]);

    // Every signal the service shows for what was asked, once: the enrich job's newest per domain, and every signal
    // since `since` up to the second run's clock.
    const expected = new Set([...[...enrichTruth.signalIds.values()].flat(), ...firstTruth.ids, ...secondTruth.ids]);
    const stored = await query<{ signal_id: string; domain: string; source_manifest: string }>(
      'select signal_id, domain, source_manifest from signal_kit_signals',
    );
    expect(stored.length).toBe(new Set(stored.map((row) => row.signal_id)).size);
    expect(sorted(stored.map((row) => row.signal_id))).toEqual(sorted(expected));

    // The newer run's versions replaced the older ones: every signal the full refresh pushed is the second run's,
    // the rest are still where they were loaded from.
    const pushedAgain = new Set(secondTruth.ids);
    for (const row of stored) {
      const from = pushedAgain.has(row.signal_id)
        ? second.manifestUrl
        : firstTruth.ids.includes(row.signal_id)
          ? first.manifestUrl
          : enrich.manifestUrl;
      expect(row.source_manifest, row.signal_id).toBe(from);
    }
    expect(stored.some((row) => row.source_manifest === enrich.manifestUrl)).toBe(true);

    // One row per company of the watchlist, with the status the service's truth gives it.
    const rows = await query<{ domain: string; status: string }>('select domain, status from signal_kit_enrich_rows');
    expect(sorted(rows.map((row) => row.domain))).toEqual(sorted(enrichTruth.domains.map((d) => d.domain)));
    const truthStatus = new Map(enrichTruth.domains.map((d) => [d.domain, d.status]));
    for (const row of rows) expect(row.status, row.domain).toBe(truthStatus.get(row.domain));

    // Loading the older manifests again (and the newest) changes nothing: not a row version rewritten.
    const snapshot = () =>
      query(
        `select 'signals' as t, count(*)::int as n, string_agg(xmin::text || source_manifest, ',' order by signal_id) as v
           from signal_kit_signals
         union all select 'rows', count(*)::int, string_agg(xmin::text, ',' order by row_key) from signal_kit_enrich_rows`,
      );
    const before = await snapshot();
    const mark = env.sandbox.truth.lastCall();
    for (const manifest of [first.manifestUrl, enrich.manifestUrl, second.manifestUrl]) {
      const report = await load(manifest);
      for (const table of report.tables)
        expect(table, `${manifest} ${table.table}`).toMatchObject({ inserted: 0, updated: 0 });
    }
    expect(await snapshot()).toEqual(before);
    // Loading reads the bucket only: not one call to the service.
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);

    // The same three manifests into a DuckDB file, read back by DuckDB: the same signals, each from the same manifest,
    // the same rows; reloading changes nothing there either.
    const file = join(dir, 'warehouse.duckdb');
    const manifests = [enrich.manifestUrl, first.manifestUrl, second.manifestUrl];
    for (const manifest of manifests) await load(manifest, `duckdb://${file}`);
    for (const manifest of manifests) {
      for (const table of (await load(manifest, `duckdb://${file}`)).tables)
        expect(table, `duckdb ${manifest} ${table.table}`).toMatchObject({ inserted: 0, updated: 0 });
    }
    const instance = await DuckDBInstance.create(file);
    const duck = await instance.connect();
    try {
      const duckSignals = (
        await duck.runAndReadAll('select signal_id, source_manifest from signal_kit_signals order by signal_id')
      ).getRowObjectsJS();
      expect(duckSignals).toEqual(
        sorted(stored.map((row) => row.signal_id)).map((id) => ({
          signal_id: id,
          source_manifest: stored.find((row) => row.signal_id === id)?.source_manifest,
        })),
      );
      const duckRows = (await duck.runAndReadAll('select domain from signal_kit_enrich_rows')).getRowObjectsJS();
      expect(sorted(duckRows.map((row) => String(row['domain'])))).toEqual(sorted(rows.map((row) => row.domain)));
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
    // Five jobs' and runs' loads into each database, each a child process.
  }, 300_000);
});
