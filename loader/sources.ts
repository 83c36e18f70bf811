/**
 * A table's rows as COPY input, part by part, each streamed (part-read.ts): read through once to prove its size and
 * sha256 before a byte of it is decoded, then read again as it is converted, checked again as that ends. A flat part
 * (JSONL or Parquet) is converted into COPY text in the converter thread (copy-thread.ts), so that this thread only
 * reads the part and writes chunks into COPY; output lines are made into rows here, a slice of lines at a time. The
 * next part is proved while the current one is copied, and no further ahead, so that the server does not wait long at
 * a part's start; memory holds a few chunks of each, never a part.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  type CopySource,
  copyTextField,
  type NulCount,
  type PgColumn,
  writableColumns,
} from '../connectors/postgres/index.ts';
import type { Store } from '../connectors/storage/index.ts';
import type { TableRow } from '../contract/tables/columns.ts';
import { CopyThread } from './copy-thread.ts';
import { sliceLines } from './line-slices.ts';
import type { LoadPart } from './manifest.ts';
import { encodeRows, type PartCopySpec, partSlices } from './part-copy.ts';
import { checkedPartChunks, verifyPart } from './part-read.ts';
import { type LoadTable, pgColumnNames, SOURCE_FINISHED_AT, SOURCE_MANIFEST } from './tables.ts';

/**
 * How output lines of a part (`lines`, a slice of the part's lines, the first of them its line `firstLine`) are made
 * into the table's rows.
 */
export type RowsOf = (
  lines: string[],
  part: LoadPart,
  firstLine: number,
) => TableRow[] | Iterable<Record<string, unknown>>;

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
  // The load's columns are the flat table's, in its order, then the two saying where a row came from (tables.ts) and
  // the table's constants: those are the same on every row, so they are encoded once, as every line's end.
  const provenance: Record<string, string | null> = {
    [SOURCE_MANIFEST]: options.manifestUrl,
    [SOURCE_FINISHED_AT]: options.finishedAt,
    ...options.table.constants,
  };
  const tail = columns.slice(own.length);
  const pgNames = pgColumnNames(own.map((column) => column.name));
  if (pgNames.some((name, i) => columns[i]?.name !== name) || tail.some((c) => !(c.name in provenance))) {
    throw new Error(`the columns of ${options.table.pg.name} are not the flat table's followed by the ones load adds`);
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

  const { store, manifestUrl, count } = options;
  /** The part's output lines as COPY text, a slice of lines at a time, as its bytes are read (and checked again). */
  async function* linesText(part: LoadPart): AsyncGenerator<Buffer> {
    const slices = partSlices(part.key, { bytes: part.bytes, chunks: checkedPartChunks(store, part) }, manifestUrl);
    let line = 1;
    for await (const slice of slices) {
      const rows = options.rowsOf(sliceLines(slice), part, line);
      yield* encodeRows(rows, ownColumns, suffix, byName, serialize, count);
      for (let at = slice.indexOf(0x0a); at !== -1; at = slice.indexOf(0x0a, at + 1)) line += 1;
    }
  }

  /**
   * A part proved (its size and sha256, read through once) and made ready to stream: a flat part converted by
   * `thread` (a Parquet part from its private copy in `copies`), output lines here.
   */
  async function prepare(part: LoadPart, thread: CopyThread | undefined, copies: string | undefined) {
    if (spec?.from === 'parquet' && thread && copies) {
      const file = join(copies, `${createHash('sha256').update(part.key).digest('hex')}.parquet`);
      await verifyPart(store, part, file);
      const body = thread.convert(spec, part.key, { bytes: part.bytes, file }, count);
      body.once('close', () => void rm(file, { force: true }));
      return { name: part.key, body };
    }
    await verifyPart(store, part);
    if (spec && thread) {
      const chunks = checkedPartChunks(store, part);
      return { name: part.key, body: thread.convert(spec, part.key, { bytes: part.bytes, chunks }, count) };
    }
    return { name: part.key, body: Readable.from(linesText(part)) };
  }

  return async function* open() {
    const { parts } = options;
    count.nul = 0;
    // One converter thread per pass over a table's flat parts: with it, a part is converted while the one before it
    // is copied, and no more than the next part waits converted.
    const thread = spec && parts.length > 0 ? new CopyThread() : undefined;
    // Parquet parts are decoded from private copies (read at random), in a folder of this pass's own.
    const copies =
      spec?.from === 'parquet' && parts.length > 0 ? await mkdtemp(join(tmpdir(), 'signal-kit-load-')) : undefined;
    try {
      let next = parts[0] ? prepare(parts[0], thread, copies) : undefined;
      for (let i = 0; i < parts.length; i++) {
        const source = await (next as Promise<CopySource>);
        const following = parts[i + 1];
        next = following ? prepare(following, thread, copies) : undefined;
        // Keep a failed prefetch from surfacing as an unhandled rejection before its turn.
        next?.catch(() => {});
        yield source;
      }
    } finally {
      await thread?.close();
      if (copies) await rm(copies, { recursive: true, force: true });
    }
  };
}
