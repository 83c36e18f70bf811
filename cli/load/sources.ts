/**
 * A table's rows as COPY input, part by part: each part read whole, checked against its manifest's size and sha256
 * before a byte of it is sent, then encoded in COPY's text format in chunks while the server reads the previous ones
 * (a Parquet part decoded one row group at a time). The next part is fetched, checked and its start decoded
 * (gunzipped; a Parquet part's first row group) while the current one is copied, so that the server does not wait at
 * each part's start.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { TableRow } from '../../activities/tables/columns.ts';
import { PartChecksumError } from '../../connectors/errors.ts';
import { type CopySource, copyTextField, type PgColumn, writableColumns } from '../../connectors/postgres/index.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { jsonlToCopyText } from './jsonl-copy.ts';
import type { LoadPart } from './manifest.ts';
import { parquetRowGroups } from './parquet-rows.ts';
import { type LoadTable, SOURCE_FINISHED_AT, SOURCE_MANIFEST } from './tables.ts';

const CHUNK_BYTES = 256 * 1024;
/** Input bytes of a flat part converted at a time (about a third of that as COPY text). */
const SLICE_BYTES = 512 * 1024;

/** A part's bytes, refused (naming the part) unless its size and sha256 are the manifest's. */
export async function readVerifiedPart(store: Store, part: LoadPart): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== part.sha256 || bytes.length !== part.bytes) {
    throw new PartChecksumError({ url: store.url, key: part.key, expected: part.sha256, actual });
  }
  return bytes;
}

/** A part's JSON lines (gunzipped when its key ends in .gz). */
export function partLines(part: LoadPart, bytes: Buffer): string[] {
  const text = (part.key.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  return text.split('\n').filter((line) => line !== '');
}

/** How the output lines of a part (`lines`) are made into the table's rows. */
export type RowsOf = (lines: string[], part: LoadPart) => TableRow[] | Iterable<Record<string, unknown>>;

/**
 * What a table's parts are: the flat table's own parts (`jsonl`, one row a line as written; `parquet`), or the job's
 * or run's output lines (`lines`), made into table rows here.
 */
export type PartSource = 'jsonl' | 'parquet' | 'lines';

export interface SourceOptions {
  store: Store;
  table: LoadTable;
  parts: readonly LoadPart[];
  from: PartSource;
  /** For `lines` parts. */
  rowsOf: RowsOf;
  manifestUrl: string;
  finishedAt: string;
}

/** The columns a load writes, in COPY order. */
export const copyColumns = (table: LoadTable): PgColumn[] => writableColumns(table.pg);

function* parseEach(lines: string[]): Generator<Record<string, unknown>> {
  for (const line of lines) yield JSON.parse(line) as Record<string, unknown>;
}

/** Opens the table's parts from the first, each time it is called (a load that merges reads them twice). */
export function tableSources(options: SourceOptions): () => AsyncIterable<CopySource> {
  const columns = copyColumns(options.table);
  const own = options.table.def.columns;
  // The load's columns are the flat table's, in its order, then the two saying where a row came from (tables.ts):
  // those two are the same on every row, so they are encoded once, as every line's end.
  const provenance: Record<string, string> = {
    [SOURCE_MANIFEST]: options.manifestUrl,
    [SOURCE_FINISHED_AT]: options.finishedAt,
  };
  const tail = columns.slice(own.length);
  if (own.some((column, i) => columns[i]?.name !== column.name) || tail.some((c) => !(c.name in provenance))) {
    throw new Error(`the columns of ${options.table.pg.name} are not the flat table's followed by the provenance`);
  }
  const ownColumns = columns.slice(0, own.length);
  const suffix = tail.map((column) => `\t${copyTextField(provenance[column.name], column.type)}`).join('');
  // A json column built in memory holds the value itself, which may be a plain string: always serialize it (the
  // flat parts hold it as JSON text already).
  const serialize = own.map((column) => options.from === 'lines' && column.type === 'json');

  const names = own.map((column) => column.name);
  const byName = (row: Record<string, unknown>, i: number) => row[names[i] as string];
  const byIndex = (row: unknown[], i: number) => row[i];

  /** Rows (objects by column name, or arrays in the table's column order) as COPY text, in chunks. */
  function* encode<R>(rows: Iterable<R>, cell: (row: R, i: number) => unknown): Generator<Buffer> {
    let text = '';
    for (const row of rows) {
      for (let i = 0; i < ownColumns.length; i++) {
        const column = ownColumns[i] as PgColumn;
        let value = cell(row, i);
        if (serialize[i] && value !== null && value !== undefined) value = JSON.stringify(value);
        if (i > 0) text += '\t';
        text += copyTextField(value, column.type);
      }
      text += `${suffix}\n`;
      if (text.length >= CHUNK_BYTES) {
        yield Buffer.from(text);
        text = '';
      }
    }
    if (text) yield Buffer.from(text);
  }

  // A flat JSONL part straight into COPY text (jsonl-copy.ts), the columns load adds after each line.
  const fast = { names, suffix: Buffer.from(suffix) };
  /**
   * A flat part's COPY text, converted slice by slice as the server asks for more (so that converting the next slice
   * overlaps with the server copying the last); a slice of another shape goes the parsing way.
   */
  function* fastChunks(raw: Buffer): Generator<Buffer> {
    for (let start = 0; start < raw.length; ) {
      const cut = raw.indexOf(0x0a, Math.min(raw.length, start + SLICE_BYTES));
      const stop = cut < 0 ? raw.length : cut + 1;
      const slice = raw.subarray(start, stop);
      const text = jsonlToCopyText(slice, fast);
      if (text) yield text;
      else
        yield* encode(
          parseEach(
            slice
              .toString('utf8')
              .split('\n')
              .filter((line) => line !== ''),
          ),
          byName,
        );
      start = stop;
    }
  }

  /** A Parquet part's COPY text: its first row group decoded and encoded now, the others when the server asks. */
  async function parquetBody(bytes: Buffer, key: string): Promise<AsyncIterable<Buffer>> {
    const groups = parquetRowGroups(bytes, options.table.def, { manifestUrl: options.manifestUrl, key })();
    const first = await groups.next();
    const ready = first.done ? [] : [...encode(first.value, byIndex)];
    return (async function* () {
      yield* ready;
      for await (const rows of groups) yield* encode(rows, byIndex);
    })();
  }

  /** A part read, checked and made ready to stream. */
  async function prepare(part: LoadPart): Promise<CopySource> {
    const bytes = await readVerifiedPart(options.store, part);
    const gzipped = part.key.endsWith('.gz');
    if (options.from === 'parquet') return { name: part.key, body: Readable.from(await parquetBody(bytes, part.key)) };
    if (options.from === 'jsonl') {
      // In this thread: Node's asynchronous gunzip hands out 16 KiB at a time and cost more CPU (bench/README.md).
      const raw = gzipped ? gunzipSync(bytes) : bytes;
      return { name: part.key, body: Readable.from(fastChunks(raw)) };
    }
    return { name: part.key, body: Readable.from(encode(options.rowsOf(partLines(part, bytes), part), byName)) };
  }

  return async function* open() {
    const { parts } = options;
    let next = parts[0] ? prepare(parts[0]) : undefined;
    for (let i = 0; i < parts.length; i++) {
      const source = await (next as Promise<CopySource>);
      const following = parts[i + 1];
      next = following ? prepare(following) : undefined;
      // Keep a failed prefetch from surfacing as an unhandled rejection before its turn.
      next?.catch(() => {});
      yield source;
    }
  };
}
