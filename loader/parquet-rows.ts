/**
 * A flat table's Parquet part read back as rows, one row group at a time (hyparquet), so that what is read and decoded
 * at once is a row group, never the whole part. Values come out as COPY wants them: times as ISO 8601 text, dates as
 * `YYYY-MM-DD`, JSON columns as their JSON text (not parsed only to be serialized again), lists as arrays.
 */
import { open } from 'node:fs/promises';
import * as zlib from 'node:zlib';
import {
  type AsyncBuffer,
  type Compressors,
  type FileMetaData,
  parquetMetadataAsync,
  parquetRead,
  parquetSchema,
  snappyUncompress,
} from 'hyparquet';
import { ManifestError } from '../connectors/errors.ts';
import type { TableDef } from '../contract/tables/columns.ts';
import { inflatedPast, inflateLimit } from './limits.ts';

const utf8 = new TextDecoder();

const DAY_MS = 86_400_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** `YYYY-MM-DD` of a day since 1970 (the civil-from-days algorithm, without a Date per value). */
function isoDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) return new Date(days * DAY_MS).toISOString().slice(0, 10);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(doy - Math.floor((153 * mp + 2) / 5) + 1)}`;
}

/** ISO 8601 UTC with milliseconds, as Date's toISOString writes it (every timestamp of a part goes through here). */
export function isoFromEpochMs(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${isoDate(days)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

const PARSERS = {
  timestampFromMilliseconds: (millis: bigint) => isoFromEpochMs(Number(millis)),
  timestampFromMicroseconds: (micros: bigint) => isoFromEpochMs(Number(micros / 1000n)),
  timestampFromNanoseconds: (nanos: bigint) => isoFromEpochMs(Number(nanos / 1_000_000n)),
  dateFromDays: isoDate,
  jsonFromBytes: (bytes: Uint8Array) => bytes && utf8.decode(bytes),
};

/** A row group's pages decompressed so far, against the part's limit. */
interface Budget {
  left: number;
}

/**
 * The codecs Node has, and hyparquet's SNAPPY: the kit's writer uses ZSTD where Node has it
 * (activities/tables/encode.ts); GZIP and BROTLI for parts written by other tools. Each page's size is taken from its
 * header and charged to the row group's budget before it is decompressed, and decompression stops at that size, so a
 * page whose header or stream lies takes no more than the budget.
 */
function boundedCompressors(budget: Budget, refuse: () => Error): Compressors {
  const charge = (outputLength: number) => {
    if (outputLength > budget.left) throw refuse();
    budget.left -= outputLength;
    return { maxOutputLength: Math.max(1, outputLength) };
  };
  const wrap = (inflate: (input: Uint8Array, limit: { maxOutputLength: number }) => Uint8Array) => {
    return (input: Uint8Array, outputLength: number) => {
      const limit = charge(outputLength);
      try {
        return inflate(input, limit);
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw refuse();
        throw error;
      }
    };
  };
  return {
    GZIP: wrap((input, limit) => zlib.gunzipSync(input, limit)),
    BROTLI: wrap((input, limit) => zlib.brotliDecompressSync(input, limit)),
    SNAPPY: (input, outputLength) => {
      charge(outputLength);
      const page = new Uint8Array(outputLength);
      snappyUncompress(input, page);
      return page;
    },
    ...(typeof zlib.zstdDecompressSync === 'function'
      ? { ZSTD: wrap((input, limit) => zlib.zstdDecompressSync(input, limit)) }
      : {}),
  };
}

/**
 * A file as hyparquet reads it, a byte range at a time (the footer, then each row group's column chunks), through one
 * open handle; `close` when done.
 */
export async function fileRanges(path: string): Promise<{ file: AsyncBuffer; close: () => Promise<void> }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const slice = async (start: number, end = size): Promise<ArrayBuffer> => {
      const length = Math.max(0, Math.min(end, size) - start);
      const out = new Uint8Array(length);
      for (let at = 0; at < length; ) {
        const { bytesRead } = await handle.read(out, at, length - at, start + at);
        if (bytesRead === 0) throw new Error(`the file ends at ${start + at} bytes, not ${end}`);
        at += bytesRead;
      }
      return out.buffer;
    };
    return { file: { byteLength: size, slice }, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The part's top-level columns must be the table's, in its order: a part of another table is refused by name. */
function checkColumns(metadata: FileMetaData, def: TableDef, manifestUrl: string, key: string): void {
  const names = parquetSchema(metadata).children.map((child) => child.element.name);
  const expected = def.columns.map((column) => column.name);
  if (names.length !== expected.length || names.some((name, i) => name !== expected[i])) {
    throw new ManifestError(
      manifestUrl,
      `part ${key} has the columns ${names.join(', ')}, not those of the ${def.table} table (${expected.join(', ')})`,
    );
  }
}

const unreadable = (where: PartAt, error: unknown) =>
  new ManifestError(
    where.manifestUrl,
    `part ${where.key} cannot be read as Parquet: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );

interface PartAt {
  manifestUrl: string;
  key: string;
}

/**
 * A Parquet part's row groups, each read (its column chunks only) and decoded when asked for, as rows of values in
 * the table's column order. The footer is read and the columns checked at once, so that a part that is not the
 * table's fails before anything of it is sent. `file` is the part whole (its size the one its manifest lists).
 */
export async function parquetRowGroups(
  file: AsyncBuffer,
  def: TableDef,
  where: PartAt,
): Promise<() => AsyncGenerator<unknown[][]>> {
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (error) {
    throw unreadable(where, error);
  }
  checkColumns(metadata, def, where.manifestUrl, where.key);
  // Every row group is decoded whole: its pages, decompressed, must stay within the part's limit. The footer's own
  // sizes are checked first (a group that says it is bigger is refused before a page is read), the pages' headers
  // as each is read (a footer that understates is caught there).
  const limit = inflateLimit(file.byteLength);
  const refuse = () => inflatedPast(where.manifestUrl, where.key, limit);
  for (const group of metadata.row_groups) {
    const declared = group.columns.reduce(
      (sum, chunk) => sum + Number(chunk.meta_data?.total_uncompressed_size ?? 0),
      0,
    );
    if (declared > limit) throw refuse();
  }
  return async function* rowGroups() {
    let start = 0;
    for (const group of metadata.row_groups) {
      const end = start + Number(group.num_rows);
      let rows: unknown[][] = [];
      const compressors = boundedCompressors({ left: limit }, refuse);
      try {
        await parquetRead({
          file,
          metadata,
          rowStart: start,
          rowEnd: end,
          rowFormat: 'array',
          parsers: PARSERS,
          compressors,
          onComplete: (read) => {
            rows = read;
          },
        });
      } catch (error) {
        if (error instanceof ManifestError) throw error;
        throw unreadable(where, error);
      }
      yield rows;
      start = end;
    }
  };
}
