/**
 * A load's plan, whatever the destination: which tables a manifest holds (tables.ts: their columns, keys and which
 * version of a row is newer), which of its parts fill each, and how their lines become the table's rows.
 */
import { feedDir } from '../activities/feeds/layout.ts';
import { ManifestError } from '../connectors/errors.ts';
import { feedRow } from '../contract/tables/feeds.ts';
import { enrichTables, invalidRows, verifyRows } from '../contract/tables/rows.ts';
import { type SignalLike, signalRow } from '../contract/tables/signals.ts';
import type { LoadManifest, LoadPart } from './manifest.ts';
import { parseLines } from './part-copy.ts';
import type { PartSource, RowsOf } from './sources.ts';
import {
  feedLoadTable,
  invalidLoadTable,
  type LoadTable,
  rowsLoadTable,
  signalsLoadTable,
  syncRowsLoadTable,
} from './tables.ts';

type Line = Record<string, unknown>;

export interface TablePlan {
  table: LoadTable;
  from: PartSource;
  parts: LoadPart[];
  rowsOf: RowsOf;
}

/**
 * The flat parts' formats a table is read from, fastest into COPY first (bench/postgres-load.ts): JSONL becomes COPY
 * text byte by byte, Parquet is decoded into values first. CSV never: its cells that start like a formula are altered.
 */
export const FLAT_FORMATS = ['jsonl', 'parquet'] as const;

const isLinesPart = (part: LoadPart) => part.table === undefined || part.table === 'lines';

/**
 * Which parts fill which table, and how their lines become the table's rows. A job writes every table in each of its
 * formats, and a table with no rows (no invalid input, say) has no part: so once the manifest lists flat parts in a
 * format, a table without parts in it is empty, not a reason to read the output lines.
 */
export function planTables(manifest: LoadManifest, prefix: string): TablePlan[] {
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
  if (source.kind === 'sync') {
    // A night writes no output lines: its rows table is read from its flat parts (rows.csv is the CRM's file, its
    // cells named for the CRM and altered where they start like a formula).
    if (!format) {
      throw new ManifestError(
        url,
        'field "parts": a sync night is loaded from its rows table, which it writes with --format jsonl or parquet; this night has none',
      );
    }
    const table = syncRowsLoadTable(prefix, source, kept, url);
    return [
      plan(table, 'rows', () => {
        throw new ManifestError(url, 'a sync night has no output lines');
      }),
    ];
  }
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
