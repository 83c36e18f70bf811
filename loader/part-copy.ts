/**
 * A flat part's bytes (checked against its manifest) as COPY text, in chunks: a JSONL part converted slice by slice as
 * it is read (jsonl-copy.ts, with a parsing way for lines of another shape), a Parquet part one row group at a time
 * from its private copy. It runs in the load's converter thread (copy-worker.ts).
 */

import { ManifestError } from '../connectors/errors.ts';
import { copyTextField, type NulCount, type PgColumn } from '../connectors/postgres/index.ts';
import type { TableDef } from '../contract/tables/columns.ts';
import { jsonlToCopyText } from './jsonl-copy.ts';
import { gunzipChunks } from './limits.ts';
import { lineSlices, sliceLines } from './line-slices.ts';
import { fileRanges, parquetRowGroups } from './parquet-rows.ts';

const CHUNK_BYTES = 256 * 1024;
/** Input bytes of a flat part converted at a time (about a third of that as COPY text). */
const SLICE_BYTES = 512 * 1024;

/** What converting a table's flat parts needs: plain data a thread can be sent. */
export interface PartCopySpec {
  from: 'jsonl' | 'parquet';
  /** The flat table's column names, as its parts hold them (a PostgreSQL name may be cut: tables.ts). */
  names: string[];
  /** The flat table's columns, in COPY order. */
  columns: PgColumn[];
  /** The text every line ends with (the provenance columns), starting with a tab. */
  suffix: string;
  def: TableDef;
  manifestUrl: string;
}

/**
 * Rows (objects by column name, or arrays in the columns' order) as COPY text, in chunks; `serialize[i]` says the
 * i-th value is a value to write as JSON text rather than JSON text already.
 */
export function* encodeRows<R>(
  rows: Iterable<R>,
  columns: readonly PgColumn[],
  suffix: string,
  cell: (row: R, i: number) => unknown,
  serialize: readonly boolean[] = [],
  count?: NulCount,
): Generator<Buffer> {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as PgColumn;
      let value = cell(row, i);
      if (serialize[i] && value !== null && value !== undefined) value = JSON.stringify(value);
      if (i > 0) text += '\t';
      text += copyTextField(value, column.type, count);
    }
    text += `${suffix}\n`;
    if (text.length >= CHUNK_BYTES) {
      yield Buffer.from(text);
      text = '';
    }
  }
  if (text) yield Buffer.from(text);
}

const byIndex = (row: unknown[], i: number) => row[i];

/**
 * A part's lines as objects; a line that is not a JSON object is refused by the part's key and line number, never with
 * its bytes (which the parser's own message would quote).
 */
export function parseLines(
  lines: readonly string[],
  manifestUrl: string,
  key: string,
  firstLine = 1,
): Record<string, unknown>[] {
  return lines.map((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ManifestError(manifestUrl, `part ${key}, line ${firstLine + i}: not a JSON object`);
    }
    return value as Record<string, unknown>;
  });
}

/**
 * What the converter reads a part from, its size as its manifest lists it (and as was proved) beside it: a JSONL
 * part's bytes as they are read, or the private copy of a Parquet part, which is read at random.
 */
export type PartInput = { bytes: number } & ({ chunks: AsyncIterable<Buffer> } | { file: string });

async function* jsonlChunks(
  slices: AsyncIterable<Buffer>,
  spec: PartCopySpec,
  key: string,
  count: NulCount,
): AsyncGenerator<Buffer> {
  const names = spec.names;
  const json = spec.columns.map((column) => column.type === 'jsonb');
  const fast = { names, json, suffix: Buffer.from(spec.suffix) };
  const byName = (row: Record<string, unknown>, i: number) => row[names[i] as string];
  let line = 1;
  for await (const slice of slices) {
    const text = jsonlToCopyText(slice, fast, count);
    if (text) yield text;
    else {
      const rows = parseLines(sliceLines(slice), spec.manifestUrl, key, line);
      yield* encodeRows(rows, spec.columns, spec.suffix, byName, [], count);
    }
    for (let at = slice.indexOf(0x0a); at !== -1; at = slice.indexOf(0x0a, at + 1)) line += 1;
  }
}

/** A JSONL part's bytes (gunzipped, within its limit, when its key ends in .gz) in slices of whole lines. */
export function partSlices(key: string, input: { bytes: number; chunks: AsyncIterable<Buffer> }, manifestUrl: string) {
  const text = key.endsWith('.gz') ? gunzipChunks(input.chunks, input.bytes, manifestUrl, key) : input.chunks;
  return lineSlices(text, SLICE_BYTES);
}

/**
 * A part's COPY text, converted as its bytes come; the NULs replaced by their stand-in are added to `count`.
 */
export async function* partCopyText(
  spec: PartCopySpec,
  key: string,
  input: PartInput,
  count: NulCount,
): AsyncGenerator<Buffer> {
  if ('chunks' in input) {
    if (spec.from !== 'jsonl') throw new Error(`part ${key}: a ${spec.from} part is read from its copy`);
    yield* jsonlChunks(partSlices(key, input, spec.manifestUrl), spec, key, count);
    return;
  }
  const { file, close } = await fileRanges(input.file);
  try {
    const groups = await parquetRowGroups(file, spec.def, { manifestUrl: spec.manifestUrl, key });
    for await (const rows of groups()) yield* encodeRows(rows, spec.columns, spec.suffix, byIndex, [], count);
  } finally {
    await close();
  }
}
