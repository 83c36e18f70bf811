import * as zlib from 'node:zlib';
import type { Column, TableDef, TableRow } from '../../contract/tables/columns.ts';
import { jsonText } from '../../contract/tables/values.ts';
import type { Compression, OutputFormat } from './formats.ts';
import { encodeParquet } from './parquet.ts';

export { OUTPUT_FORMATS, type OutputFormat, parseFormats, tableContentType, tableExtension } from './formats.ts';

/**
 * Encoders of a flat table's part: JSONL, CSV (RFC 4180, formula cells neutralized) and Parquet (parquet.ts). Each takes the
 * table's column list, so a part's schema depends on its table only, never on its rows.
 */

export function encodeTable(
  format: OutputFormat,
  def: TableDef,
  rows: readonly TableRow[],
  compression: Compression | undefined,
): Buffer {
  if (format === 'csv') return encodeCsv(def, rows);
  if (format === 'parquet') return encodeParquet(def, rows);
  const bytes = encodeJsonl(def, rows);
  return compression === 'none' ? bytes : zlib.gzipSync(bytes);
}

// ---- JSONL ---------------------------------------------------------------------------------------------------------

/** One object per row with every column (null when unknown), in the table's order; times as ISO 8601 UTC. */
function encodeJsonl(def: TableDef, rows: readonly TableRow[]): Buffer {
  const lines = rows.map((row) => jsonlLine(def, row));
  return Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'utf8');
}

/** One row's JSONL line, without its line end. */
export function jsonlLine(def: TableDef, row: TableRow): string {
  const out: Record<string, unknown> = {};
  for (const column of def.columns) out[column.name] = jsonValue(column, row[column.name] ?? null);
  return JSON.stringify(out);
}

/** A `json` column is JSON text in JSONL too, so that a reader inferring types never sees its shape drift. */
function jsonValue(column: Column, value: unknown): unknown {
  if (value === null) return null;
  if (column.type === 'timestamp') return new Date(value as number).toISOString();
  if (column.type === 'json') return jsonText(value);
  return value;
}

// ---- CSV -----------------------------------------------------------------------------------------------------------

/**
 * RFC 4180: a header row, CRLF line ends, a field quoted when it holds a comma, a quote, CR or LF (quotes doubled).
 * UTF-8 without a byte-order mark. A text cell from the service that a spreadsheet would run as a formula (see
 * `FORMULA_START`) is neutralized as OWASP's CSV-injection guidance says: prefixed with a single quote and quoted. The
 * user's own values (`Column.userValue`) are written byte for byte. Times are ISO 8601 UTC, lists and JSON values are JSON text, unknown values empty cells.
 */
function encodeCsv(def: TableDef, rows: readonly TableRow[]): Buffer {
  const lines = [csvHeader(def.columns.map((column) => column.name))];
  for (const row of rows) lines.push(csvRow(def, row));
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
}

/** A CSV header line (without its line end): the names as given, quoted where RFC 4180 needs it. */
export const csvHeader = (names: readonly string[]): string => names.map(csvField).join(',');

/** One row of a table as a CSV line, without its line end. */
export const csvRow = (def: TableDef, row: TableRow): string =>
  def.columns.map((column) => csvCell(column, row[column.name] ?? null)).join(',');

function csvCell(column: Column, value: unknown): string {
  if (value === null) return '';
  switch (column.type) {
    case 'int':
    case 'double':
      return String(value);
    case 'timestamp':
      return new Date(value as number).toISOString();
    case 'string_list':
      return csvText(column, JSON.stringify(value));
    case 'json':
      return csvText(column, jsonText(value));
    default:
      return csvText(column, String(value));
  }
}

/** The user's own values are written as they were; text from the service is neutralized. */
const csvText = (column: Column, text: string) => csvField(column.userValue ? text : neutralize(text));

/**
 * What a spreadsheet may run as a formula at the start of a cell: `=` `+` `-` `@`, their full-width forms `＝` `＋`
 * `－` `＠` (U+FF1D, U+FF0B, U+FF0D, U+FF20: Excel reads them as the ASCII ones), a tab and a carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** OWASP's rule for CSV injection: a cell starting like a formula gets a leading single quote. */
export function neutralize(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** One CSV cell: quoted when it holds a quote, a comma or a line end (or starts with a quote). */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) || text.startsWith("'") ? `"${text.replaceAll('"', '""')}"` : text;
}
