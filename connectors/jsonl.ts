import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { type CsvError, parse as parseCsv } from 'csv-parse';
import { jsonlParser } from 'stream-json/jsonl/parser.js';
import { CsvInputError, InflatedPastError, JsonlSyntaxError } from './errors.ts';
import { exceedsJsonDepth } from './json-depth.ts';
import type { ObjectInfo, Store, WriteOptions } from './storage/store.ts';

type ByteSource = Readable | AsyncIterable<Uint8Array | string>;

export const isGzipKey = (key: string) => key.toLowerCase().endsWith('.gz');

/** A gzip object inflates to at most this many times its stored size (as `load` caps a part)… */
export const GZIP_INFLATE_RATIO = 64;
/** …and at least to this, whatever its stored size. */
export const GZIP_INFLATE_FLOOR = 64 * 2 ** 20;
/** The most a gzip object of `storedBytes` may inflate to. */
export const gzipInflateLimit = (storedBytes: number): number =>
  Math.max(GZIP_INFLATE_FLOOR, GZIP_INFLATE_RATIO * storedBytes);

/** The refusal of a gzip object that inflates past its limit (`gzipInflateLimit`), naming `what`. */
export function inflatedPast(what: string, storedBytes: number, limit: number): InflatedPastError {
  const mib = (bytes: number) => `${Math.ceil(bytes / 2 ** 20)} MiB`;
  return new InflatedPastError(
    `${what} inflates past ${mib(limit)} (${GZIP_INFLATE_RATIO} × its ${mib(storedBytes)} as stored, at least ` +
      `${mib(GZIP_INFLATE_FLOOR)}): a compressed file this far out of proportion is refused; split it, or store ` +
      'it uncompressed',
    limit,
  );
}

/**
 * The object's bytes, gunzipped when its key ends in `.gz`. Given `inflateCap`, the gunzipped bytes are held to
 * `gzipInflateLimit` of the object's stored size: past it the stream fails with `InflatedPastError` naming `what`.
 */
export async function openDecoded(
  store: Store,
  key: string,
  inflateCap?: { what: string; storedBytes: number },
): Promise<Readable> {
  const body = await store.openRead(key);
  if (!isGzipKey(key)) return body;
  const gunzip = createGunzip();
  body.once('error', (err) => gunzip.destroy(err));
  const inflated = body.pipe(gunzip);
  if (!inflateCap) return inflated;
  const limit = gzipInflateLimit(inflateCap.storedBytes);
  let size = 0;
  const held = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > limit) callback(inflatedPast(inflateCap.what, inflateCap.storedBytes, limit));
      else callback(null, chunk);
    },
  });
  inflated.once('error', (err) => held.destroy(err));
  held.once('close', () => {
    body.destroy();
    gunzip.destroy();
  });
  return inflated.pipe(held);
}

/**
 * Reads a gzip object through once, inflating and counting (nothing kept), and refuses it with `InflatedPastError`
 * once it passes its limit: a bomb is refused before any of its rows is read, so before anything is paid for. Memory
 * stays that of one chunk; a genuine file costs one more read of its stored bytes and the CPU to inflate it.
 */
export async function checkInflatedSize(
  store: Store,
  key: string,
  inflateCap: { what: string; storedBytes: number },
): Promise<void> {
  const inflated = await openDecoded(store, key, inflateCap);
  try {
    for await (const _ of inflated) void _;
  } finally {
    inflated.destroy();
  }
}

// ---------------------------------------------------------------------------------------------- JSONL decoding

/** A line of JSONL: its 1-based physical line number and value, or why it could not be parsed. */
export type JsonlEntry<T = unknown> =
  | { line: number; value: T; error?: undefined; raw?: undefined }
  | { line: number; value?: undefined; error: string; raw: string };

export interface JsonlReadOptions {
  /** Gunzip the source first. */
  gzip?: boolean;
  /** A longer line is an error (a runaway line must not exhaust memory). Default 16 MiB. */
  maxLineBytes?: number;
  /**
   * A line nesting arrays/objects deeper than this is an error entry (its raw text kept), so that nothing after
   * (JSON.stringify, validation) overflows the stack on it. Default: no limit.
   */
  maxDepth?: number;
}

const BAD_LINE = Symbol('bad line');

/**
 * Every non-blank line of a JSONL stream, in order; a line that is not JSON becomes `{ line, error, raw }` so that
 * the caller can record it and go on. Blank lines are skipped but still counted, so `line` is the line an editor
 * shows. CRLF line ends and a leading byte-order mark are accepted.
 */
export async function* readJsonlRecords<T = unknown>(
  source: ByteSource,
  options: JsonlReadOptions = {},
): AsyncGenerator<JsonlEntry<T>> {
  // stream-json parses each line; the splitting is ours because its own numbering skips blank lines.
  const parseLine = jsonlParser<T>({
    errorIndicator: (error: unknown) => ({ [BAD_LINE]: error instanceof Error ? error.message : String(error) }),
  });
  let line = 0;
  for await (const text of splitLines(
    options.gzip ? gunzipped(source) : source,
    options.maxLineBytes ?? 16 * 2 ** 20,
  )) {
    line++;
    if (typeof text !== 'string') {
      yield { line, error: text.error, raw: '' };
      continue;
    }
    const body = line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (body.trim() === '') continue;
    const parsed = parseLine(body);
    if (typeof parsed === 'symbol') continue;
    const value = parsed.value as T | { [BAD_LINE]: string };
    if (value !== null && typeof value === 'object' && BAD_LINE in value) {
      yield { line, error: `not valid JSON: ${value[BAD_LINE]}`, raw: body };
    } else if (options.maxDepth !== undefined && exceedsJsonDepth(value, options.maxDepth)) {
      yield { line, error: `nested deeper than ${options.maxDepth} levels`, raw: body };
    } else {
      yield { line, value: value as T };
    }
  }
}

/** Like readJsonlRecords, but the first bad line throws a JsonlSyntaxError naming it. */
export async function* readJsonl<T = unknown>(
  source: ByteSource,
  options: JsonlReadOptions = {},
): AsyncGenerator<{ line: number; value: T }> {
  for await (const entry of readJsonlRecords<T>(source, options)) {
    if (entry.error !== undefined) throw new JsonlSyntaxError(entry.line, entry.error, entry.raw);
    yield entry;
  }
}

function gunzipped(source: ByteSource): Readable {
  const gunzip = createGunzip();
  pipeline(source, gunzip).catch((err: unknown) => gunzip.destroy(err as Error));
  return gunzip;
}

/** Physical lines without their line end; an over-long line yields `{ error }` in its place and is skipped. */
async function* splitLines(source: ByteSource, maxLineBytes: number): AsyncGenerator<string | { error: string }> {
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let overLong = false;
  const take = (tail: Buffer): string | { error: string } => {
    const bytes = carry.length ? Buffer.concat([...carry, tail]) : tail;
    const wasOverLong = overLong || bytes.length > maxLineBytes;
    carry = [];
    carryBytes = 0;
    overLong = false;
    if (wasOverLong) return { error: `line longer than ${maxLineBytes} bytes` };
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    return bytes.toString('utf8', 0, end);
  };
  for await (const chunk of source) {
    const buffer =
      typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let newline = buffer.indexOf(0x0a, start); newline !== -1; newline = buffer.indexOf(0x0a, start)) {
      yield take(buffer.subarray(start, newline));
      start = newline + 1;
    }
    if (start < buffer.length && !overLong) {
      carry.push(buffer.subarray(start));
      carryBytes += buffer.length - start;
      if (carryBytes > maxLineBytes) {
        overLong = true;
        carry = [];
        carryBytes = 0;
      }
    }
  }
  if (carryBytes > 0 || overLong) yield take(Buffer.alloc(0));
}

// ---------------------------------------------------------------------------------------------- JSONL encoding

export interface JsonlWriteResult {
  key: string;
  lines: number;
  /** Bytes stored (after gzip), and their sha256: what a manifest records. */
  bytes: number;
  sha256: string;
  info: ObjectInfo;
}

/** One JSON document per line, in chunks of about 64 KiB, gzipped when asked. */
export function encodeJsonl(
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: { gzip?: boolean; onLine?: () => void } = {},
): Readable {
  async function* lines() {
    let batch = '';
    for await (const record of records) {
      const json = JSON.stringify(record);
      if (json === undefined) throw new TypeError(`cannot encode ${typeof record} as a JSON line`);
      batch += `${json}\n`;
      options.onLine?.();
      if (batch.length >= 64 * 1024) {
        yield Buffer.from(batch);
        batch = '';
      }
    }
    if (batch) yield Buffer.from(batch);
  }
  const encoded = Readable.from(lines(), { objectMode: false });
  if (!options.gzip) return encoded;
  const gzip = createGzip();
  pipeline(encoded, gzip).catch((err: unknown) => gzip.destroy(err as Error));
  return gzip;
}

/**
 * Streams `records` as JSONL into `key` (gzipped when the key ends in `.gz`) and publishes it atomically; if
 * encoding or a record source fails, nothing is published.
 */
export async function writeJsonl(
  store: Store,
  key: string,
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: WriteOptions = {},
): Promise<JsonlWriteResult> {
  const gzip = isGzipKey(key);
  let lines = 0;
  let bytes = 0;
  const hash = createHash('sha256');
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  const writer = store.openWrite(key, {
    contentType: gzip ? 'application/gzip' : 'application/x-ndjson',
    ...options,
  });
  try {
    await pipeline(encodeJsonl(records, { gzip, onLine: () => lines++ }), meter, writer.stream);
  } catch (err) {
    await writer.abort(err);
    throw err;
  }
  const info = await writer.done();
  return { key, lines, bytes, sha256: hash.digest('hex'), info };
}

// ---------------------------------------------------------------------------------------------- CSV input

/**
 * A data row of a CSV file with a header row: `row` counts data rows from 1 (header excluded, bad rows included),
 * `line` is the physical line the row ends on. A row the parser cannot take (wrong number of fields, an unclosed
 * quote) becomes `{ row, line, error, raw }`.
 */
export type CsvEntry =
  | { row: number; line: number; record: Record<string, string>; error?: undefined; raw?: undefined }
  | { row: number; line: number; record?: undefined; error: string; raw?: string };

export { CsvInputError };

export interface CsvReadOptions {
  delimiter?: string;
  gzip?: boolean;
  /** A longer record is an error (a runaway quote must not exhaust memory). Default 1 MiB. */
  maxRecordBytes?: number;
}

/** A row the parser skipped, put into the parser's own output between the records around it. */
interface SkippedRow {
  [SKIPPED]: true;
  line: number;
  error: string;
  raw?: string | undefined;
}
const SKIPPED = Symbol('skipped row');

/**
 * The rows of a CSV file with a header row (header names trimmed), streaming; see CsvEntry.
 *
 * Memory stays bounded whatever the input: a row the parser skips is pushed into the parser's readable side, in
 * order with the good rows, so a run of bad rows is subject to the same backpressure as good ones (the parser is
 * not fed more input while its output is full) instead of piling up in a side queue until the next good row.
 */
export async function* readCsvRecords(source: ByteSource, options: CsvReadOptions = {}): AsyncGenerator<CsvEntry> {
  let fatal: CsvInputError | undefined;
  let lastSkippedLine = -1;
  const parser: Transform = parseCsv({
    columns: (header: string[]) => header.map((name) => name.trim()),
    bom: true,
    delimiter: options.delimiter ?? ',',
    // Exports mix line ends more often than one would think (a CRLF header, LF rows).
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_quotes: true,
    skip_empty_lines: false,
    max_record_size: options.maxRecordBytes ?? 2 ** 20,
    info: true,
    raw: true,
    skip_records_with_error: true,
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      if (fatal) return undefined;
      const line = Number(err?.['lines'] ?? 0);
      const spannedLines = (raw ?? '').replace(/\r?\n$/, '').split('\n').length;
      // The parser cannot resynchronize after these: the rows that follow would vanish into one error.
      if (err?.code === 'CSV_MAX_RECORD_SIZE' || (err?.code === 'CSV_QUOTE_NOT_CLOSED' && spannedLines > 1)) {
        const start = line - spannedLines + 1;
        fatal = new CsvInputError(
          `${err.code === 'CSV_MAX_RECORD_SIZE' ? 'a record grows beyond the size limit' : 'a quote opened here is never closed'}; the rows after it cannot be read`,
          start,
          { cause: err },
        );
        return undefined; // the parser stops producing rows; the ones before it still drain
      }
      if (line === lastSkippedLine) return undefined; // one error per row
      lastSkippedLine = line;
      const blank = raw !== undefined && raw.trim() === '';
      const skipped: SkippedRow = {
        [SKIPPED]: true,
        line,
        error: blank ? 'blank line' : (err?.message ?? 'unreadable row'),
        raw: raw?.slice(0, MAX_SKIPPED_RAW),
      };
      parser.push(skipped);
      return undefined;
    },
  });
  const input = options.gzip ? gunzipped(source) : source;
  pipeline(input, parser).catch((err: unknown) => parser.destroy(err as Error));

  let row = 0;
  let lastLine = 1;
  try {
    for await (const item of parser as AsyncIterable<
      SkippedRow | { info: { lines: number }; record: Record<string, string> }
    >) {
      if (SKIPPED in item) {
        if (fatal && item.line >= (fatal.line ?? 0)) continue;
        lastLine = item.line;
        yield { row: ++row, line: item.line, error: item.error, raw: item.raw };
        continue;
      }
      lastLine = item.info.lines;
      yield { row: ++row, line: item.info.lines, record: item.record };
    }
  } catch (err) {
    if (!fatal) {
      const line = Number((err as CsvError)['lines'] ?? lastLine) || undefined;
      throw new CsvInputError((err as Error).message, line, { cause: err });
    }
  }
  if (fatal) throw fatal;
}

/** The longest raw text kept for a skipped CSV row. */
export const MAX_SKIPPED_RAW = 4096;
