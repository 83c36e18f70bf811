/**
 * `signal-kit load`: a finished job's, scheduled-push run's, scheduled-feed run's or sync night's tables into PostgreSQL
 * or a DuckDB file (destination.ts), from its manifest alone, in one transaction, following its plan (plan.ts). Each table is read from the job's flat parts of that table when it wrote them (`--format`), in the
 * format that goes fastest into COPY, else made from the output lines by the same code that writes the flat tables.
 * It never calls the Signal Data Service.
 */
import { openStore } from '../config/storage.ts';
import { DatabaseError } from '../connectors/errors.ts';
import { connectPostgres, type UpsertResult } from '../connectors/postgres/index.ts';
import type { Store } from '../connectors/storage/index.ts';
import type { Destination, DestinationTx } from './destination.ts';
import { connectDuckdb, duckdbPath } from './duckdb.ts';
import { type LoadManifest, readLoadManifest } from './manifest.ts';
import { planTables, type TablePlan } from './plan.ts';
import { tableSources } from './sources.ts';

export interface LoadOptions {
  manifestUrl: string;
  /** Where to: a postgres:// URL of the database, or duckdb:///absolute/path/file.duckdb. */
  into: string;
  /** Prefix of the table names (default `signal_kit_`). */
  prefix: string;
}

export interface TableLoad extends UpsertResult {
  table: string;
  /** `table`: the flat table's parts, in `format`; `lines`: made from the output lines. */
  from: 'table' | 'lines';
  format?: 'jsonl' | 'parquet';
  parts: number;
  /** A sync night: rows of the sync this night did not bring, marked gone now (`gone_at`). */
  marked_gone?: number;
  /** NUL characters (PostgreSQL holds none, in text or jsonb) loaded as U+FFFD. */
  nul_replaced: number;
}

export interface LoadReport {
  manifest: string;
  output: string;
  status: string;
  finished_at: string;
  tables: TableLoad[];
}

/** The destination `--into` names: `postgres://`/`postgresql://` or `duckdb:///absolute/path/file.duckdb`. */
async function openDestination(into: string): Promise<Destination> {
  if (/^duckdb:/i.test(into)) return connectDuckdb(duckdbPath(into));
  if (/^postgres(ql)?:/i.test(into)) return connectPostgres(into);
  throw new DatabaseError('--into is no destination a load knows (postgres:// or duckdb:///path)', {});
}

/** Loads one table of the plan in the destination's transaction: its rows upserted, and a snapshot's gone rows marked. */
async function loadTable(tx: DestinationTx, plan: TablePlan, manifest: LoadManifest, store: Store): Promise<TableLoad> {
  await tx.ensureTable(plan.table.pg);
  const count = { nul: 0 };
  const open = tableSources({
    count,
    store,
    table: plan.table,
    parts: plan.parts,
    from: plan.from,
    rowsOf: plan.rowsOf,
    manifestUrl: manifest.url,
    finishedAt: manifest.finishedAt,
  });
  const columns = plan.table.pg.columns.filter((column) => !column.generatedAs).map((column) => column.name);
  const result = await tx.upsert(plan.table.pg, { columns, format: 'text', open });
  const snapshot = plan.table.snapshot;
  const gone = snapshot ? { marked_gone: await tx.markGone(plan.table.pg, snapshot, manifest.finishedAt) } : {};
  const from = plan.from === 'lines' ? { from: 'lines' as const } : { from: 'table' as const, format: plan.from };
  return { table: plan.table.pg.name, ...from, parts: plan.parts.length, ...result, ...gone, nul_replaced: count.nul };
}

/** Loads every table of the manifest in one transaction: all of it, or (on any error) none of it. */
export async function loadManifest(options: LoadOptions): Promise<LoadReport> {
  const manifest = await readLoadManifest(options.manifestUrl);
  const store: Store = openStore(manifest.output);
  const plans = planTables(manifest, options.prefix);
  const destination = await openDestination(options.into);
  try {
    const tables = await destination.transaction(async (tx) => {
      const loaded: TableLoad[] = [];
      for (const plan of plans) loaded.push(await loadTable(tx, plan, manifest, store));
      return loaded;
    });
    return {
      manifest: manifest.url,
      output: manifest.output,
      status: manifest.status,
      finished_at: manifest.finishedAt,
      tables,
    };
  } finally {
    await destination.close();
  }
}
