/**
 * `signal-kit load`: a finished job's, scheduled-push run's or scheduled-feed run's tables into PostgreSQL, from its manifest alone, in one
 * transaction. Each table is read from the job's flat parts of that table when it wrote them (`--format`), in the
 * format that goes fastest into COPY, else made from the output lines by the same code that writes the flat tables.
 * It never calls the Signal Data Service.
 */
import { feedDir } from '../activities/feeds/layout.ts';
import { openStore } from '../config/storage.ts';
import { connectPostgres, type UpsertResult } from '../connectors/postgres/index.ts';
import type { Store } from '../connectors/storage/index.ts';
import { feedRow } from '../contract/tables/feeds.ts';
import { enrichTables, invalidRows, verifyRows } from '../contract/tables/rows.ts';
import { type SignalLike, signalRow } from '../contract/tables/signals.ts';
import { type LoadManifest, type LoadPart, readLoadManifest } from './manifest.ts';
import { parseLines } from './part-copy.ts';
import { type PartSource, type RowsOf, tableSources } from './sources.ts';
import { feedLoadTable, invalidLoadTable, type LoadTable, rowsLoadTable, signalsLoadTable } from './tables.ts';

type Line = Record<string, unknown>;

export interface LoadOptions {
  manifestUrl: string;
  /** postgres:// URL of the database. */
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

interface TablePlan {
  table: LoadTable;
  from: PartSource;
  parts: LoadPart[];
  rowsOf: RowsOf;
}

/**
 * The flat parts' formats a table is read from, fastest into COPY first (bench/postgres-load.ts): JSONL becomes COPY
 * text byte by byte, Parquet is decoded into values first. CSV never: its cells that start like a formula are altered.
 */
const FLAT_FORMATS = ['jsonl', 'parquet'] as const;

const isLinesPart = (part: LoadPart) => part.table === undefined || part.table === 'lines';

/**
 * Which parts fill which table, and how their lines become the table's rows. A job writes every table in each of its
 * formats, and a table with no rows (no invalid input, say) has no part: so once the manifest lists flat parts in a
 * format, a table without parts in it is empty, not a reason to read the output lines.
 */
function planTables(manifest: LoadManifest, prefix: string): TablePlan[] {
  const { url, source, kept } = manifest;
  const parsed = (lines: string[], part: LoadPart, first: number) => parseLines(lines, url, part.key, first) as Line[];
  const format = FLAT_FORMATS.find((f) => manifest.parts.some((part) => !isLinesPart(part) && part.format === f));
  const plan = (table: LoadTable, name: string, fromLines: RowsOf): TablePlan => {
    if (format) {
      const parts = manifest.parts.filter((part) => part.table === name && part.format === format);
      return { table, from: format, parts, rowsOf: fromLines };
    }
    return { table, from: 'lines', parts: manifest.parts.filter(isLinesPart), rowsOf: fromLines };
  };
  if (source.kind === 'feed') {
    const name = feedDir(source.feedKind);
    const table = feedLoadTable(prefix, name, url);
    return [
      plan(table, name, (lines, part, first) =>
        parsed(lines, part, first).map((line) => feedRow(name, String(line['key']), line)),
      ),
    ];
  }
  if (source.kind === 'push') {
    const signals = signalsLoadTable(prefix, url);
    return [
      plan(signals, 'signals', (lines, part, first) =>
        parsed(lines, part, first).map((line) =>
          signalRow(line as unknown as SignalLike, {
            record_id: null,
            row: null,
            domain: typeof line['domain'] === 'string' ? line['domain'] : null,
          }),
        ),
      ),
    ];
  }
  const answered = (lines: string[], part: LoadPart, first: number) =>
    parsed(lines, part, first).filter((line) => line['status'] !== 'invalid');
  const invalid = invalidLoadTable(prefix, kept, url);
  const invalidPlan = plan(invalid, 'invalid', (lines, part, first) =>
    invalidRows(
      parsed(lines, part, first).filter((line) => line['status'] === 'invalid'),
      invalid.def,
    ),
  );
  const rows = rowsLoadTable(prefix, source.jobKind, kept, url);
  if (source.jobKind === 'verify-emails') {
    return [
      plan(rows, 'rows', (lines, part, first) => verifyRows(answered(lines, part, first), rows.def)),
      invalidPlan,
    ];
  }
  const signals = signalsLoadTable(prefix, url);
  return [
    plan(rows, 'rows', (lines, part, first) => enrichTables(answered(lines, part, first), rows.def).rows),
    plan(signals, 'signals', (lines, part, first) => enrichTables(answered(lines, part, first), rows.def).signals),
    invalidPlan,
  ];
}

/** Loads every table of the manifest in one transaction: all of it, or (on any error) none of it. */
export async function loadManifest(options: LoadOptions): Promise<LoadReport> {
  const manifest = await readLoadManifest(options.manifestUrl);
  const store: Store = openStore(manifest.output);
  const plans = planTables(manifest, options.prefix);
  const session = await connectPostgres(options.into);
  try {
    const tables = await session.transaction(async (tx) => {
      const loaded: TableLoad[] = [];
      for (const plan of plans) {
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
        const from = plan.from === 'lines' ? { from: 'lines' as const } : { from: 'table' as const, format: plan.from };
        loaded.push({
          table: plan.table.pg.name,
          ...from,
          parts: plan.parts.length,
          ...result,
          nul_replaced: count.nul,
        });
      }
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
    await session.close();
  }
}
