/**
 * A flat table's Parquet part read back as rows, one row group at a time (hyparquet), so that what is decoded at once
 * is a row group, never the whole part. Values come out as COPY wants them: times as ISO 8601 text, dates as
 * `YYYY-MM-DD`, JSON columns as their JSON text (not parsed only to be serialized again), lists as arrays.
 */
import * as zlib from 'node:zlib';
import { type Compressors, type FileMetaData, parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import type { TableDef } from '../../activities/tables/columns.ts';
import { ManifestError } from '../../connectors/errors.ts';

const utf8 = new TextDecoder();

const PARSERS = {
  timestampFromMilliseconds: (millis: bigint) => new Date(Number(millis)).toISOString(),
  timestampFromMicroseconds: (micros: bigint) => new Date(Number(micros / 1000n)).toISOString(),
  timestampFromNanoseconds: (nanos: bigint) => new Date(Number(nanos / 1_000_000n)).toISOString(),
  dateFromDays: (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10),
  jsonFromBytes: (bytes: Uint8Array) => bytes && utf8.decode(bytes),
};

/**
 * The codecs Node has (hyparquet has SNAPPY built in): the kit's writer uses ZSTD where Node has it
 * (activities/tables/encode.ts); GZIP and BROTLI for parts written by other tools.
 */
const COMPRESSORS: Compressors = {
  GZIP: (input) => zlib.gunzipSync(input),
  BROTLI: (input) => zlib.brotliDecompressSync(input),
  ...(typeof zlib.zstdDecompressSync === 'function'
    ? { ZSTD: (input: Uint8Array) => zlib.zstdDecompressSync(input) }
    : {}),
};

/** The part's bytes as hyparquet reads them (an ArrayBuffer holding exactly the file). */
function arrayBuffer(bytes: Buffer): ArrayBuffer {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return whole ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
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
 * A Parquet part's row groups, each read when asked for. The footer is read and the columns checked at once, so
 * that a part that is not the table's fails before anything of it is sent.
 */
export function parquetRowGroups(
  bytes: Buffer,
  def: TableDef,
  where: PartAt,
): () => AsyncGenerator<Record<string, unknown>[]> {
  const file = arrayBuffer(bytes);
  let metadata: FileMetaData;
  try {
    metadata = parquetMetadata(file);
  } catch (error) {
    throw unreadable(where, error);
  }
  checkColumns(metadata, def, where.manifestUrl, where.key);
  return async function* rowGroups() {
    let start = 0;
    for (const group of metadata.row_groups) {
      const end = start + Number(group.num_rows);
      let rows: Record<string, unknown>[] = [];
      try {
        await parquetRead({
          file,
          metadata,
          rowStart: start,
          rowEnd: end,
          rowFormat: 'object',
          parsers: PARSERS,
          compressors: COMPRESSORS,
          onComplete: (read) => {
            rows = read;
          },
        });
      } catch (error) {
        throw unreadable(where, error);
      }
      yield rows;
      start = end;
    }
  };
}
