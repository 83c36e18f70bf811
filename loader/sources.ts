/**
 * A table's rows as COPY input, part by part: each part read whole and checked against its manifest's size and sha256
 * before a byte of it is sent. A flat part (JSONL or Parquet) is then converted into COPY text in the converter thread
 * (copy-thread.ts), so that this thread only writes chunks into COPY; output lines are made into rows here. The next
 * part is fetched, checked and handed to the converter while the current one is copied, and no further ahead, so that
 * the server does not wait at a part's start and memory holds at most two parts.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { TableRow } from '../activities/tables/columns.ts';
import { PartChecksumError } from '../connectors/errors.ts';
import {
  type CopySource,
  copyTextField,
  type NulCount,
  type PgColumn,
  writableColumns,
} from '../connectors/postgres/index.ts';
import type { Store } from '../connectors/storage/index.ts';
import { CopyThread } from './copy-thread.ts';
import { gunzipPart } from './limits.ts';
import type { LoadPart } from './manifest.ts';
import { encodeRows, type PartCopySpec } from './part-copy.ts';
import { type LoadTable, pgColumnNames, SOURCE_FINISHED_AT, SOURCE_MANIFEST } from './tables.ts';

/**
 * A part's bytes, refused (naming the part) unless its size and sha256 are the manifest's: its size is checked before
 * a byte is read, and reading stops as soon as it passes the manifest's size, so an understated size costs nothing.
 */
export async function readVerifiedPart(store: Store, part: LoadPart): Promise<Buffer> {
  const refuse = (differs: 'size' | 'sha256') =>
    new PartChecksumError({ url: store.url, key: part.key, expected: part.sha256, differs });
  const info = await store.stat(part.key);
  if (info !== undefined && info.size !== part.bytes) throw refuse('size');
  const chunks: Buffer[] = [];
  const hash = createHash('sha256');
  let size = 0;
  const stream = await store.openRead(part.key);
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > part.bytes) {
      (stream as { destroy?: () => void }).destroy?.();
      throw refuse('size');
    }
    hash.update(chunk as Buffer);
    chunks.push(chunk as Buffer);
  }
  if (size !== part.bytes) throw refuse('size');
  if (hash.digest('hex') !== part.sha256) throw refuse('sha256');
  return Buffer.concat(chunks);
}

/** A part's JSON lines (gunzipped when its key ends in .gz). */
export function partLines(part: LoadPart, bytes: Buffer, manifestUrl: string): string[] {
  const text = (part.key.endsWith('.gz') ? gunzipPart(bytes, manifestUrl, part.key) : bytes).toString('utf8');
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
  /** The NULs replaced by their stand-in in the last pass over the parts (each pass starts it at 0). */
  count: NulCount;
}

/** The columns a load writes, in COPY order. */
export const copyColumns = (table: LoadTable): PgColumn[] => writableColumns(table.pg);

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
  const pgNames = pgColumnNames(own.map((column) => column.name));
  if (pgNames.some((name, i) => columns[i]?.name !== name) || tail.some((c) => !(c.name in provenance))) {
    throw new Error(`the columns of ${options.table.pg.name} are not the flat table's followed by the provenance`);
  }
  const ownColumns = columns.slice(0, own.length);
  const suffix = tail.map((column) => `\t${copyTextField(provenance[column.name], column.type)}`).join('');
  // A json column built in memory holds the value itself, which may be a plain string: always serialize it (the
  // flat parts hold it as JSON text already).
  const serialize = own.map((column) => options.from === 'lines' && column.type === 'json');

  const names = own.map((column) => column.name);
  const byName = (row: Record<string, unknown>, i: number) => row[names[i] as string];
  const spec: PartCopySpec | undefined =
    options.from === 'lines'
      ? undefined
      : {
          from: options.from,
          names,
          columns: ownColumns,
          suffix,
          def: options.table.def,
          manifestUrl: options.manifestUrl,
        };

  /** A part read, checked and made ready to stream (a flat part converted by `thread`). */
  async function prepare(part: LoadPart, thread: CopyThread | undefined): Promise<CopySource> {
    const bytes = await readVerifiedPart(options.store, part);
    if (spec && thread) return { name: part.key, body: thread.convert(spec, part.key, bytes, options.count) };
    const rows = options.rowsOf(partLines(part, bytes, options.manifestUrl), part);
    const text = encodeRows(rows, ownColumns, suffix, byName, serialize, options.count);
    return { name: part.key, body: Readable.from(text) };
  }

  return async function* open() {
    const { parts } = options;
    options.count.nul = 0;
    // One converter thread per pass over a table's flat parts: with it, a part is converted while the one before it
    // is copied, and no more than the next part waits converted.
    const thread = spec && parts.length > 0 ? new CopyThread() : undefined;
    try {
      let next = parts[0] ? prepare(parts[0], thread) : undefined;
      for (let i = 0; i < parts.length; i++) {
        const source = await (next as Promise<CopySource>);
        const following = parts[i + 1];
        next = following ? prepare(following, thread) : undefined;
        // Keep a failed prefetch from surfacing as an unhandled rejection before its turn.
        next?.catch(() => {});
        yield source;
      }
    } finally {
      await thread?.close();
    }
  };
}
