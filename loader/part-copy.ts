/**
 * A flat part's bytes (already checked against its manifest) as COPY text, in chunks: a JSONL part converted slice by
 * slice (jsonl-copy.ts, with a parsing way for lines of another shape), a Parquet part one row group at a time. Pure
 * computation on plain data, so that it runs in the load's converter thread (copy-worker.ts) as well as here.
 */
import type { TableDef } from '../activities/tables/columns.ts';
import { ManifestError } from '../connectors/errors.ts';
import { copyTextField, type NulCount, type PgColumn } from '../connectors/postgres/index.ts';
import { jsonlToCopyText } from './jsonl-copy.ts';
import { gunzipPart } from './limits.ts';
import { parquetRowGroups } from './parquet-rows.ts';

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

/** A flat JSONL part's COPY text, slice by slice; a slice of another shape goes the parsing way. */
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

function* jsonlChunks(raw: Buffer, spec: PartCopySpec, key: string, count: NulCount): Generator<Buffer> {
  const names = spec.names;
  const json = spec.columns.map((column) => column.type === 'jsonb');
  const fast = { names, json, suffix: Buffer.from(spec.suffix) };
  const byName = (row: Record<string, unknown>, i: number) => row[names[i] as string];
  let line = 1;
  for (let start = 0; start < raw.length; ) {
    const cut = raw.indexOf(0x0a, Math.min(raw.length, start + SLICE_BYTES));
    const stop = cut < 0 ? raw.length : cut + 1;
    const slice = raw.subarray(start, stop);
    const text = jsonlToCopyText(slice, fast, count);
    if (text) yield text;
    else {
      const lines = slice
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== '');
      yield* encodeRows(parseLines(lines, spec.manifestUrl, key, line), spec.columns, spec.suffix, byName, [], count);
    }
    for (let at = slice.indexOf(0x0a); at !== -1; at = slice.indexOf(0x0a, at + 1)) line += 1;
    start = stop;
  }
}

/**
 * A part's COPY text: the part's bytes as its manifest lists them (gzip when its key ends in .gz); the NULs replaced
 * by their stand-in are added to `count`.
 */
export async function* partCopyText(
  spec: PartCopySpec,
  key: string,
  bytes: Buffer,
  count: NulCount,
): AsyncGenerator<Buffer> {
  if (spec.from === 'jsonl') {
    yield* jsonlChunks(key.endsWith('.gz') ? gunzipPart(bytes, spec.manifestUrl, key) : bytes, spec, key, count);
    return;
  }
  const groups = parquetRowGroups(bytes, spec.def, { manifestUrl: spec.manifestUrl, key })();
  for await (const rows of groups) yield* encodeRows(rows, spec.columns, spec.suffix, byIndex, [], count);
}
