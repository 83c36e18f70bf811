/**
 * A table's rows as COPY input, part by part: each part read whole, checked against its manifest's size and sha256
 * before a byte of it is sent, then encoded in COPY's text format in chunks while the server reads the previous ones
 * (a Parquet part decoded one row group at a time). The next part is fetched while the current one is copied.
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
  const jsonColumns = new Set(options.table.def.columns.filter((c) => c.type === 'json').map((c) => c.name));
  const provenance: Record<string, string> = {
    [SOURCE_MANIFEST]: options.manifestUrl,
    [SOURCE_FINISHED_AT]: options.finishedAt,
  };

  function* encode(rows: Iterable<Record<string, unknown>>): Generator<Buffer> {
    let text = '';
    for (const row of rows) {
      let line = '';
      for (let i = 0; i < columns.length; i++) {
        const column = columns[i] as PgColumn;
        let value = row[column.name] ?? provenance[column.name];
        // A json column built in memory holds the value itself, which may be a plain string: always serialize it
        // (the flat parts hold it as JSON text already).
        if (options.from === 'lines' && value !== null && value !== undefined && jsonColumns.has(column.name)) {
          value = JSON.stringify(value);
        }
        line += i === 0 ? copyTextField(value, column.type) : `\t${copyTextField(value, column.type)}`;
      }
      text += `${line}\n`;
      if (text.length >= CHUNK_BYTES) {
        yield Buffer.from(text);
        text = '';
      }
    }
    if (text) yield Buffer.from(text);
  }

  // A flat JSONL part straight into COPY text (jsonl-copy.ts), the columns load adds after each line.
  const fast = {
    names: options.table.def.columns.map((column) => column.name),
    suffix: Buffer.from(
      columns
        .slice(options.table.def.columns.length)
        .map((column) => `\t${copyTextField(provenance[column.name], column.type)}`)
        .join(''),
    ),
  };
  const fastUsable = columns
    .slice(0, options.table.def.columns.length)
    .every((column, i) => column.name === fast.names[i]);
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
        );
      start = stop;
    }
  }

  async function* parquetChunks(rowGroups: () => AsyncGenerator<Record<string, unknown>[]>): AsyncGenerator<Buffer> {
    for await (const rows of rowGroups()) yield* encode(rows);
  }

  return async function* open() {
    const { store, parts } = options;
    let next = parts[0] ? readVerifiedPart(store, parts[0]) : undefined;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as LoadPart;
      const bytes = await (next as Promise<Buffer>);
      const following = parts[i + 1];
      next = following ? readVerifiedPart(store, following) : undefined;
      // Keep a failed prefetch from surfacing as an unhandled rejection before its turn.
      next?.catch(() => {});
      if (options.from === 'parquet') {
        const rowGroups = parquetRowGroups(bytes, options.table.def, {
          manifestUrl: options.manifestUrl,
          key: part.key,
        });
        yield { name: part.key, body: Readable.from(parquetChunks(rowGroups)) };
        continue;
      }
      if (options.from === 'jsonl' && fastUsable) {
        const raw = part.key.endsWith('.gz') ? gunzipSync(bytes) : bytes;
        yield { name: part.key, body: Readable.from(fastChunks(raw)) };
        continue;
      }
      const lines = partLines(part, bytes);
      const rows = options.from === 'jsonl' ? parseEach(lines) : options.rowsOf(lines, part);
      yield { name: part.key, body: Readable.from(encode(rows)) };
    }
  };
}
