import * as zlib from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { Column, TableDef, TableRow } from './columns.ts';
import type { Compression, OutputFormat } from './formats.ts';

export { OUTPUT_FORMATS, type OutputFormat, parseFormats, tableContentType, tableExtension } from './formats.ts';

/**
 * Encoders of a flat table's part: JSONL, CSV (RFC 4180, formula cells neutralized) and Parquet. Each takes the
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
  const lines: string[] = [];
  for (const row of rows) {
    const out: Record<string, unknown> = {};
    for (const column of def.columns) out[column.name] = jsonValue(column, row[column.name] ?? null);
    lines.push(JSON.stringify(out));
  }
  return Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'utf8');
}

/** A `json` column is JSON text in JSONL too, so that a reader inferring types never sees its shape drift. */
function jsonValue(column: Column, value: unknown): unknown {
  if (value === null) return null;
  if (column.type === 'timestamp') return new Date(value as number).toISOString();
  if (column.type === 'json') return JSON.stringify(value);
  return value;
}

// ---- CSV -----------------------------------------------------------------------------------------------------------

/**
 * RFC 4180: a header row, CRLF line ends, a field quoted when it holds a comma, a quote, CR or LF (quotes doubled).
 * UTF-8 without a byte-order mark. A text cell that a spreadsheet would run as a formula (it starts with `=`, `+`,
 * `-`, `@`, a tab or a carriage return) is neutralized as OWASP's CSV-injection guidance says: prefixed with a single
 * quote and quoted. Times are ISO 8601 UTC, lists and JSON values are JSON text, unknown values empty cells.
 */
function encodeCsv(def: TableDef, rows: readonly TableRow[]): Buffer {
  const lines = [def.columns.map((column) => csvField(column.name)).join(',')];
  for (const row of rows) {
    lines.push(def.columns.map((column) => csvCell(column, row[column.name] ?? null)).join(','));
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
}

function csvCell(column: Column, value: unknown): string {
  if (value === null) return '';
  switch (column.type) {
    case 'int':
    case 'double':
      return String(value);
    case 'timestamp':
      return new Date(value as number).toISOString();
    case 'string_list':
    case 'json':
      return csvField(neutralize(JSON.stringify(value)));
    default:
      return csvField(neutralize(String(value)));
  }
}

const FORMULA_START = /^[=+\-@\t\r]/;

/** OWASP's rule for CSV injection: a cell starting like a formula gets a leading single quote. */
export function neutralize(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) || text.startsWith("'") ? `"${text.replaceAll('"', '""')}"` : text;
}

// ---- Parquet -------------------------------------------------------------------------------------------------------

/** The Parquet schema elements of a column (a list is the standard three-level LIST). */
function parquetElements(column: Column): Record<string, unknown>[] {
  const repetition_type = column.nullable ? 'OPTIONAL' : 'REQUIRED';
  const name = column.name;
  switch (column.type) {
    case 'string':
      return [{ name, repetition_type, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }];
    case 'json':
      return [{ name, repetition_type, type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' } }];
    case 'int':
      return [{ name, repetition_type, type: 'INT32' }];
    case 'double':
      return [{ name, repetition_type, type: 'DOUBLE' }];
    case 'timestamp':
      return [
        {
          name,
          repetition_type,
          type: 'INT64',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
        },
      ];
    case 'date':
      return [{ name, repetition_type, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }];
    case 'string_list':
      return [
        { name, repetition_type, converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        {
          name: 'element',
          repetition_type: 'REQUIRED',
          type: 'BYTE_ARRAY',
          converted_type: 'UTF8',
          logical_type: { type: 'STRING' },
        },
      ];
  }
}

const DAY_MS = 86_400_000;

/** Columns whose values are mostly distinct: written PLAIN (a dictionary would not pay) from bytes encoded here. */
const isDistinct = (column: Column) => column.text === true || column.type === 'json';

function parquetColumn(column: Column, rows: readonly TableRow[]): unknown[] {
  const values = new Array<unknown>(rows.length);
  // JSON values go as they are: the writer turns them into JSON text itself (the JSON type needs it to).
  if (column.text) return utf8Values(column, rows);
  for (let i = 0; i < rows.length; i++) {
    const value = (rows[i] as TableRow)[column.name] ?? null;
    if (value === null) values[i] = null;
    else if (column.type === 'timestamp') values[i] = BigInt(value as number);
    else if (column.type === 'date') values[i] = Date.parse(`${value as string}T00:00:00Z`) / DAY_MS;
    else values[i] = value;
  }
  return values;
}

/**
 * A text column's values as UTF-8 bytes, all in one buffer (views into it): one allocation per column rather
 * than an encoder and an array per value, which was the writer's largest cost on signals.
 */
function utf8Values(column: Column, rows: readonly TableRow[]): (Uint8Array | null)[] {
  const texts = new Array<string | null>(rows.length);
  let size = 0;
  for (let i = 0; i < rows.length; i++) {
    const value = (rows[i] as TableRow)[column.name] ?? null;
    const text = value === null ? null : String(value);
    texts[i] = text;
    if (text !== null) size += Buffer.byteLength(text);
  }
  const buffer = Buffer.allocUnsafe(size);
  const values = new Array<Uint8Array | null>(rows.length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const text = texts[i];
    if (text === null || text === undefined) {
      values[i] = null;
      continue;
    }
    const end = at + buffer.write(text, at);
    values[i] = buffer.subarray(at, end);
    at = end;
  }
  return values;
}

/** ZSTD (level 1, Node's own) where this Node has it, else the writer's built-in SNAPPY. */
const CODEC =
  typeof zlib.zstdCompressSync === 'function'
    ? {
        codec: 'ZSTD' as const,
        compressors: {
          ZSTD: (input: Uint8Array) =>
            zlib.zstdCompressSync(input, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } }),
        },
      }
    : { codec: 'SNAPPY' as const };

/** A whole Parquet file of the rows (parts are one batch each, so this is in memory). */
function encodeParquet(def: TableDef, rows: readonly TableRow[]): Buffer {
  const elements = def.columns.flatMap(parquetElements);
  const schema = [{ name: 'root', num_children: def.columns.length }, ...elements];
  const columnData = def.columns.map((column) => ({
    name: column.name,
    data: parquetColumn(column, rows),
    nullable: column.nullable,
    ...(isDistinct(column) ? { encoding: 'PLAIN' } : {}),
    // Min/max statistics on times and numbers, which readers prune by (detected_at above all); none on text, where
    // computing them cost about a fifth of the encoding (bench/parquet-cost.ts).
    statistics:
      column.type === 'timestamp' || column.type === 'date' || column.type === 'int' || column.type === 'double',
  }));
  const bytes = parquetWriteBuffer({
    // biome-ignore lint/suspicious/noExplicitAny: hyparquet's SchemaElement and DecodedArray types, built above
    columnData: columnData as any,
    // biome-ignore lint/suspicious/noExplicitAny: see above
    schema: schema as any,
    rowGroupSize: 100_000,
    createdBy: 'signal-kit',
    ...CODEC,
  });
  return Buffer.from(bytes);
}
