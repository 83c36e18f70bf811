import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { writeBody } from '../connectors/storage/common.ts';
import { StorageError } from '../connectors/storage/errors.ts';
import type { ObjectInfo, Store } from '../connectors/storage/store.ts';
import type { Compression, ManifestPart, PartCounts } from './jobs/types.ts';
import type { TableDef, TableName, TableRow } from './tables/columns.ts';
import { encodeTable, type OutputFormat, tableContentType } from './tables/encode.ts';

/**
 * The one writer of parts: every part the kit publishes (bulk job batches, scheduled-push batches, webhook collector
 * parts, and the flat tables derived from each of them in every requested format) goes through `writePart` /
 * `writeEncodedPart` / `writeTableParts`, atomically, with one metadata convention so that a re-run or a recovery
 * reads what a part holds without reading the part: its counts (`signal-kit-counts`, JSON), its sha256
 * (`signal-kit-sha256`), its status (`signal-kit-status`) and, for a table part, its table and format. Manifests,
 * written last, go through `writeManifest`. An intent export's single part is streamed; it is recorded in the
 * export's own state instead.
 */
const COUNTS_META = 'signal-kit-counts';
const SHA_META = 'signal-kit-sha256';
const STATUS_META = 'signal-kit-status';
/**
 * The paid calls whose answers the part holds (ids of their markers, activities/jobs/unsaved.ts), comma-separated: a
 * marker named here is an answer saved; any other marker left at the end is an answer paid for and not saved.
 */
const CALLS_META = 'signal-kit-calls';
const TABLE_META = 'signal-kit-table';
const FORMAT_META = 'signal-kit-format';

/**
 * `done`: every item of the batch has its line. `failed`: retries were spent; the items not yet answered are
 * `batch_failed` error lines. `partial`: the credit budget ran out inside the batch; only the items paid for have
 * lines. A re-run keeps the paid-for lines of a failed or partial part and sends only the other items.
 */
export type PartStatus = 'done' | 'failed' | 'partial';

export interface StoredPart {
  counts: PartCounts;
  failed: boolean;
  partial: boolean;
  bytes: number;
  sha256: string;
  /** The paid calls whose answers the part holds (see CALLS_META). */
  calls: string[];
  /** Table parts: which table, in which format. */
  table?: TableName;
  format?: OutputFormat;
}

/** One flat table's rows of one part, before encoding. */
export interface TableRows {
  def: TableDef;
  rows: TableRow[];
}

/** A table part encoded in one format, ready to publish (`writeTableParts`). */
export interface EncodedTablePart {
  key: string;
  table: TableName;
  format: OutputFormat;
  contentType: string;
  lines: number;
  body: Buffer;
}

/** How a job's or a push's tables are written: in which formats, JSONL compressed or not, and where each part goes. */
export interface TableOutput {
  formats: readonly OutputFormat[];
  compression: Compression | undefined;
  keyOf: (table: TableName, format: OutputFormat) => string;
}

/**
 * Encodes every table in every requested format (nothing when no format is requested). Done before anything is
 * awaited by the callers, so that the lines the tables come from are garbage while the parts are being written.
 */
export function encodeTableParts(output: TableOutput, tables: readonly TableRows[]): EncodedTablePart[] {
  const parts: EncodedTablePart[] = [];
  for (const { def, rows } of tables) {
    for (const format of output.formats) {
      parts.push({
        key: output.keyOf(def.table, format),
        table: def.table,
        format,
        contentType: tableContentType(format, output.compression),
        lines: rows.length,
        body: encodeTable(format, def, rows, output.compression),
      });
    }
  }
  return parts;
}

/**
 * Publishes encoded table parts (the same atomic, retried write as every part). Written before the part they derive
 * from, which is what marks a batch done: a crash in between rewrites them under the same keys.
 */
export async function writeTableParts(
  store: Store,
  parts: readonly EncodedTablePart[],
  status: PartStatus = 'done',
): Promise<ManifestPart[]> {
  const written: ManifestPart[] = [];
  for (const part of parts) {
    const counts = { ...zeroCounts(), lines: part.lines };
    const stored = await publish(store, part.key, part.body, counts, status, [], part.contentType, {
      [TABLE_META]: part.table,
      [FORMAT_META]: part.format,
    });
    written.push({
      key: part.key,
      lines: part.lines,
      bytes: stored.bytes,
      sha256: stored.sha256,
      table: part.table,
      format: part.format,
    });
  }
  return written;
}

/** Encodes records as JSONL (gzip unless `none`). Parts are small (one batch), so this is in memory. */
export function encodePart(compression: Compression | undefined, records: readonly unknown[]): Buffer {
  const bytes = jsonlBytes(records);
  return compression === 'none' ? bytes : gzipSync(bytes);
}

/**
 * One JSON line per record, each written straight into a buffer of the exact size: no joined string and no second
 * copy of it (a bulk-enrich part is about 1.8 MB, written once per API call).
 */
function jsonlBytes(records: readonly unknown[]): Buffer {
  const lines = records.map((record) => JSON.stringify(record));
  let size = 0;
  for (const line of lines) size += Buffer.byteLength(line) + 1;
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    at += bytes.write(line, at);
    bytes[at++] = 0x0a;
  }
  return bytes;
}

export const partContentType = (compression: Compression | undefined) =>
  compression === 'none' ? 'application/x-ndjson' : 'application/gzip';

/** Publishes a manifest (pretty JSON); written last, after every part it lists. */
export async function writeManifest(store: Store, key: string, manifest: unknown): Promise<void> {
  await store.writeText(key, `${JSON.stringify(manifest, null, 2)}\n`, { contentType: 'application/json' });
}

/**
 * Waits between tries of a part write that failed on a storage outage: about 50 s in all, within the API activities'
 * start-to-close timeout. A part usually holds an answer already paid for; failing the activity instead would call
 * the API again on retry and pay twice.
 */
const WRITE_RETRY_DELAYS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000, 8_000];

/**
 * A storage failure that may pass (the server down or restarting), unlike a missing bucket, a full disk or a refused
 * access (their rule says they are not retryable).
 */
function isTransient(error: unknown): boolean {
  return error instanceof StorageError && error.retryable;
}

/** Publishes a part and its counts in one atomic step, trying again while the storage is unreachable. */
export async function writePart(
  store: Store,
  compression: Compression | undefined,
  key: string,
  records: readonly unknown[],
  counts: PartCounts,
  status: PartStatus | boolean = 'done',
  calls: readonly string[] = [],
): Promise<StoredPart> {
  return writeEncodedPart(store, compression, key, encodePart(compression, records), counts, status, calls);
}

/**
 * `writePart` for a body already encoded with `encodePart`: the caller can let go of the records (a parsed API answer
 * is ten times its size in objects) before waiting for the storage. Once stored, the body is emptied (its memory
 * freed): the caller must not read it afterwards.
 */
export async function writeEncodedPart(
  store: Store,
  compression: Compression | undefined,
  key: string,
  body: Buffer,
  counts: PartCounts,
  status: PartStatus | boolean = 'done',
  calls: readonly string[] = [],
): Promise<StoredPart> {
  const resolved: PartStatus = status === true ? 'failed' : status === false ? 'done' : status;
  return publish(store, key, body, counts, resolved, calls, partContentType(compression), {});
}

async function publish(
  store: Store,
  key: string,
  body: Buffer,
  counts: PartCounts,
  status: PartStatus,
  calls: readonly string[],
  contentType: string,
  extra: Record<string, string>,
): Promise<StoredPart> {
  const sha256 = createHash('sha256').update(body).digest('hex');
  for (let attempt = 0; ; attempt++) {
    try {
      const stored = await writePartOnce(store, key, body, sha256, counts, status, calls, contentType, extra);
      release(body);
      return stored;
    } catch (error) {
      const delay = WRITE_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || !isTransient(error)) throw error;
      await sleep(delay);
    }
  }
}

/**
 * Frees a stored part's bytes now rather than at the next full collection, which is when V8 frees a buffer that lived
 * through the write (2 MB per bulk-enrich part; they made most of the worker's array buffers at its peak). Only a
 * buffer that is the whole of its memory: a small one shares Node's pool with other buffers.
 */
function release(body: Buffer): void {
  const memory = body.buffer;
  if (memory instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === memory.byteLength) {
    memory.transfer(0);
  }
}

async function writePartOnce(
  store: Store,
  key: string,
  body: Buffer,
  sha256: string,
  counts: PartCounts,
  status: PartStatus,
  calls: readonly string[],
  contentType: string,
  extra: Record<string, string>,
): Promise<StoredPart> {
  await writeBody(store, key, body, {
    contentType,
    metadata: { ...partMetadata(sha256, counts, status, calls), ...extra },
  });
  return {
    counts,
    failed: status === 'failed',
    partial: status === 'partial',
    bytes: body.length,
    sha256,
    calls: [...calls],
  };
}

/** The metadata a part is published with (also what a spooled part keeps, activities/jobs/spool.ts). */
export function partMetadata(
  sha256: string,
  counts: PartCounts,
  status: PartStatus,
  calls: readonly string[],
): Record<string, string> {
  return {
    [COUNTS_META]: JSON.stringify(counts),
    [SHA_META]: sha256,
    [STATUS_META]: status,
    ...(calls.length > 0 ? { [CALLS_META]: calls.join(',') } : {}),
  };
}

/** The counts a published part recorded, or undefined when the part is absent (or unreadable, so redo it). */
export async function readPart(store: Store, key: string): Promise<StoredPart | undefined> {
  return storedPart(await store.stat(key));
}

/** What a part recorded, from its object's metadata (a listing's, when the store lists metadata). */
export function storedPart(info: ObjectInfo | undefined): StoredPart | undefined {
  const raw = info?.metadata[COUNTS_META];
  if (!info || !raw) return undefined;
  try {
    return {
      counts: JSON.parse(raw) as PartCounts,
      failed: info.metadata[STATUS_META] === 'failed',
      partial: info.metadata[STATUS_META] === 'partial',
      bytes: info.size,
      sha256: info.metadata[SHA_META] ?? '',
      calls: (info.metadata[CALLS_META] ?? '').split(',').filter((id) => id !== ''),
      ...(info.metadata[TABLE_META] ? { table: info.metadata[TABLE_META] as TableName } : {}),
      ...(info.metadata[FORMAT_META] ? { format: info.metadata[FORMAT_META] as OutputFormat } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The records of a published part (parts are one batch, so this is in memory). */
export async function readPartLines<T = Record<string, unknown>>(store: Store, key: string): Promise<T[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const text = (key.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

export const zeroCounts = (): PartCounts => ({ lines: 0, ok: 0, not_found: 0, error: 0, invalid: 0, credits: 0 });
