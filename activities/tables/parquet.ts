import * as zlib from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Column, TableDef, TableRow } from '../../contract/tables/columns.ts';
import { jsonText } from '../../contract/tables/values.ts';

/**
 * A flat table's part as one Parquet file (parts are one batch each, so this is in memory), through
 * hyparquet-writer. The choices that make it cost little (bench/parquet-cost.ts):
 * - text and JSON values are turned into UTF-8 bytes here, all of a column in one buffer;
 * - columns of mostly distinct values are PLAIN (no dictionary tried), the others get the writer's dictionary;
 * - ZSTD (level 1, Node's own) compresses a column whose plain values take 1 KiB or more; a smaller one stays
 *   UNCOMPRESSED: most are a few hundred bytes once encoded (the rows table's counts), where a compressor call
 *   costs more than it saves;
 * - min/max statistics only on times and numbers, which readers prune by (detected_at above all).
 */
export function encodeParquet(def: TableDef, rows: readonly TableRow[]): Buffer {
  const writer = new ByteWriter();
  const parquet = parquetTableWriter(def, writer);
  parquet.write(rows);
  parquet.finish();
  return Buffer.from(writer.getBuffer());
}

/** Where a Parquet file goes: memory (`ByteWriter`) or a file (`fileWriter`). */
type ParquetOutput = ConstructorParameters<typeof ParquetWriter>[0]['writer'];

/**
 * A Parquet file of a flat table written a row group at a time (`write`, then `finish` for the footer): into memory
 * (`ByteWriter`), or into a local file (hyparquet-writer's `fileWriter`, which flushes each megabyte), so a part of
 * many rows never holds more than one group's.
 */
export function parquetTableWriter(def: TableDef, writer: ParquetOutput) {
  const elements = def.columns.flatMap(parquetElements);
  const schema = [{ name: 'root', num_children: def.columns.length }, ...elements];
  // The writer turns JSON columns' values into JSON text itself, one value at a time; they are bytes already here
  // (JSON text, encoded in one pass), which it writes as they are for a UTF8 column. So a JSON column is UTF8
  // while its values are written, and JSON again for the footer written by `finish`.
  const jsonElements = elements.filter((element) => element['converted_type'] === 'JSON');
  const parquet = new ParquetWriter({
    writer,
    // biome-ignore lint/suspicious/noExplicitAny: hyparquet's SchemaElement type, built above
    schema: schema as any,
    codec: CODEC,
    compressors: COMPRESSORS,
    createdBy: 'signal-kit',
  });
  return {
    write(rows: readonly TableRow[]): void {
      const columnData = def.columns.map((column) => {
        const { values, plainBytes } = parquetValues(column, rows);
        return {
          name: column.name,
          data: values,
          nullable: column.nullable,
          ...(isDistinct(column) ? { encoding: 'PLAIN' } : {}),
          codec: plainBytes >= COMPRESS_FROM_BYTES ? CODEC : 'UNCOMPRESSED',
          statistics:
            column.type === 'timestamp' || column.type === 'date' || column.type === 'int' || column.type === 'double',
        };
      });
      for (const element of jsonElements) element['converted_type'] = 'UTF8';
      // biome-ignore lint/suspicious/noExplicitAny: hyparquet's DecodedArray type, built above
      parquet.write({ columnData: columnData as any, rowGroupSize: 100_000 });
      for (const element of jsonElements) element['converted_type'] = 'JSON';
    },
    finish(): void {
      parquet.finish();
    },
  };
}

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

/** Columns whose values are mostly distinct (see `Column.text`; JSON values too). */
const isDistinct = (column: Column) => column.text === true || column.type === 'json';

const DAY_MS = 86_400_000;

/** Below this many bytes of plain values, a column is not compressed: the call would cost more than it saves. */
const COMPRESS_FROM_BYTES = 1024;

const WIDTH: Partial<Record<Column['type'], number>> = { int: 4, date: 4, double: 8, timestamp: 8 };

/** A column's values as the writer takes them, and about how many bytes they take written plain. */
function parquetValues(column: Column, rows: readonly TableRow[]): { values: unknown[]; plainBytes: number } {
  if (column.text) return utf8Values(column, rows, String);
  if (column.type === 'json') return utf8Values(column, rows, jsonText);
  const values = new Array<unknown>(rows.length);
  const width = WIDTH[column.type];
  let plainBytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const value = (rows[i] as TableRow)[column.name] ?? null;
    if (value === null) values[i] = null;
    else if (column.type === 'timestamp') values[i] = BigInt(value as number);
    else if (column.type === 'date') values[i] = Date.parse(`${value as string}T00:00:00Z`) / DAY_MS;
    else values[i] = value;
    if (value !== null) plainBytes += width ?? textLength(value);
  }
  return { values, plainBytes };
}

/** About the bytes of a string or a list of strings (UTF-16 units: exact for ASCII text). */
function textLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 4;
  let length = 0;
  for (const item of value as string[]) length += item.length + 4;
  return length;
}

/**
 * A column's values as UTF-8 text, all in one buffer (views into it): one allocation per column, and when the
 * column is ASCII (the usual case), one encoding call too.
 */
function utf8Values(column: Column, rows: readonly TableRow[], asText: (value: unknown) => string) {
  const texts = new Array<string | null>(rows.length);
  let chars = 0;
  for (let i = 0; i < rows.length; i++) {
    const value = (rows[i] as TableRow)[column.name] ?? null;
    const text = value === null ? null : asText(value);
    texts[i] = text;
    if (text !== null) chars += text.length;
  }
  const joined = Buffer.from(texts.join(''), 'utf8');
  // ASCII: a byte a character. Else each value is encoded on its own (text joined may differ at the seams: two lone
  // surrogates, one ending a value and one starting the next, would encode as one character).
  const ascii = joined.length === chars;
  const buffer = ascii ? joined : Buffer.allocUnsafe(texts.reduce((n, text) => n + Buffer.byteLength(text ?? ''), 0));
  const values = new Array<Uint8Array | null>(rows.length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const text = texts[i] ?? null;
    if (text === null) {
      values[i] = null;
      continue;
    }
    const end = ascii ? at + text.length : at + buffer.write(text, at);
    values[i] = buffer.subarray(at, end);
    at = end;
  }
  return { values, plainBytes: buffer.length };
}

/** ZSTD (level 1, Node's own) where this Node has it, else the writer's built-in SNAPPY. */
const CODEC = typeof zlib.zstdCompressSync === 'function' ? ('ZSTD' as const) : ('SNAPPY' as const);
const ZSTD_LEVEL_1 = { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } };
const COMPRESSORS =
  CODEC === 'ZSTD' ? { ZSTD: (input: Uint8Array) => zlib.zstdCompressSync(input, ZSTD_LEVEL_1) } : undefined;
