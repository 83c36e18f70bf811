import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { StorageError } from '../../connectors/storage/errors.ts';
import type { ObjectInfo, Store } from '../../connectors/storage/store.ts';
import { readAll, writeBody } from '../../connectors/storage/store-io.ts';
import { TABLE_NAMES, type TableDef, type TableName, type TableRow } from '../../contract/tables/columns.ts';
import { encodeTable, OUTPUT_FORMATS, type OutputFormat, tableContentType } from '../tables/encode.ts';
import type { Compression, ManifestPart, PartCounts } from './types.ts';

/**
 * The one writer of parts: every part the kit publishes (bulk job batches, scheduled-push batches, webhook collector
 * parts, and the flat tables derived from each of them in every requested format) goes through `writePart` /
 * `writeEncodedPart` / `writeTableParts`, atomically, with one metadata convention so that a re-run or a recovery
 * reads what a part holds without reading the part: its counts (`signal-kit-counts`, JSON), its sha256
 * (`signal-kit-sha256`), its status (`signal-kit-status`) and, for a table part, its table and format. Manifests,
 * written last, go through `writeManifest`. An intent export's single part is streamed; it is recorded in the
 * export's own state instead.
 *
 * Every part also records whose it is (`signal-kit-owner`, `signal-kit-options`, `signal-kit-index`) and its size.
 * A part found in the output is trusted only when it proves itself (`readPart`): metadata that parses, names the
 * reader's owner, options and index, and bytes of the recorded size, sha256 and line count. Anything else is treated
 * as absent, so the batch is done again, and the part written then records why (`signal-kit-redone`).
 */
const COUNTS_META = 'signal-kit-counts';
const SHA_META = 'signal-kit-sha256';
const STATUS_META = 'signal-kit-status';
/**
 * The paid calls whose answers the part holds (ids of their markers, activities/run/unsaved-answers.ts), comma-separated: a
 * marker named here is an answer saved; any other marker left at the end is an answer paid for and not saved.
 */
const CALLS_META = 'signal-kit-calls';
const TABLE_META = 'signal-kit-table';
const FORMAT_META = 'signal-kit-format';
const BYTES_META = 'signal-kit-bytes';
const OWNER_META = 'signal-kit-owner';
const OPTIONS_META = 'signal-kit-options';
const INDEX_META = 'signal-kit-index';
const REDONE_META = 'signal-kit-redone';

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
  /** Why the part this one replaced was not trusted, when it replaced one. */
  redone?: string;
}

/** Whose a part is: checked before a part is reused, so that no other job's, options' or batch's part passes. */
export interface PartIdentity {
  /** The job id (a push: `<name>/run-<id>`; a collector: its destination id). */
  owner: string;
  /** A hash of the options that change the part's answers (`optionsHash`), or '' when nothing does. */
  options: string;
  /** The batch (or part sequence) number the part holds. */
  index: number;
  /** Only when written: why the part found before it was not trusted (reported in the manifest). */
  redone?: string;
}

/**
 * A part looked for in the output: `part` when it proved itself; `distrusted` says why one present did not.
 * `fingerprint` identifies whatever object was there (trusted or not), to tell later whether it changed.
 */
export interface PartRead {
  part?: StoredPart;
  distrusted?: string;
  fingerprint?: string;
}

/** A short, stable hash of the options that change a part's answers (key order does not matter). */
export function optionsHash(options: unknown): string {
  return createHash('sha256').update(canonicalJson(options)).digest('hex').slice(0, 32);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
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
  status: PartStatus,
  identity: PartIdentity,
  options: { keepBodies?: boolean } = {},
): Promise<ManifestPart[]> {
  const written: ManifestPart[] = [];
  for (const part of parts) {
    const counts = { ...zeroCounts(), lines: part.lines };
    const meta = { [TABLE_META]: part.table, [FORMAT_META]: part.format };
    const stored = await publish(store, part.key, part.body, counts, status, [], identity, part.contentType, meta, {
      keepBody: options.keepBodies === true,
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

/**
 * Runs a storage step that stands between a paid answer and its part (reading the part again before writing it) with
 * the same patience as the part's write: an outage of the storage must not throw the paid answer away.
 */
export async function withStorageRetries<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const delay = WRITE_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || !isTransient(error)) throw error;
      await sleep(delay);
    }
  }
}

/** Publishes a part and its counts in one atomic step, trying again while the storage is unreachable. */
export async function writePart(
  store: Store,
  compression: Compression | undefined,
  key: string,
  records: readonly unknown[],
  counts: PartCounts,
  status: PartStatus | boolean,
  calls: readonly string[],
  identity: PartIdentity,
): Promise<StoredPart> {
  return writeEncodedPart(store, compression, key, encodePart(compression, records), counts, status, calls, identity);
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
  status: PartStatus | boolean,
  calls: readonly string[],
  identity: PartIdentity,
): Promise<StoredPart> {
  const resolved: PartStatus = status === true ? 'failed' : status === false ? 'done' : status;
  return publish(store, key, body, counts, resolved, calls, identity, partContentType(compression), {});
}

async function publish(
  store: Store,
  key: string,
  body: Buffer,
  counts: PartCounts,
  status: PartStatus,
  calls: readonly string[],
  identity: PartIdentity,
  contentType: string,
  extra: Record<string, string>,
  options: { keepBody?: boolean } = {},
): Promise<StoredPart> {
  const sha256 = createHash('sha256').update(body).digest('hex');
  for (let attempt = 0; ; attempt++) {
    try {
      await writeBody(store, key, body, {
        contentType,
        metadata: { ...partMetadata(sha256, counts, status, calls, identity, body.length), ...extra },
      });
      const stored: StoredPart = {
        counts,
        failed: status === 'failed',
        partial: status === 'partial',
        bytes: body.length,
        sha256,
        calls: [...calls],
        ...(identity.redone ? { redone: identity.redone } : {}),
      };
      if (!options.keepBody) releaseBody(body);
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
export function releaseBody(body: Buffer): void {
  const memory = body.buffer;
  if (memory instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === memory.byteLength) {
    memory.transfer(0);
  }
}

/** The metadata a part is published with (also what a spooled part keeps, activities/paid/spool.ts). */
export function partMetadata(
  sha256: string,
  counts: PartCounts,
  status: PartStatus,
  calls: readonly string[],
  identity: PartIdentity,
  bytes: number,
): Record<string, string> {
  const { redone } = identity;
  return {
    [COUNTS_META]: JSON.stringify(counts),
    [SHA_META]: sha256,
    [STATUS_META]: status,
    ...(calls.length > 0 ? { [CALLS_META]: calls.join(',') } : {}),
    [BYTES_META]: String(bytes),
    // Metadata travels as HTTP headers on S3 and GCS: only ASCII there.
    [OWNER_META]: encodeURIComponent(identity.owner),
    [OPTIONS_META]: identity.options,
    [INDEX_META]: String(identity.index),
    ...(redone ? { [REDONE_META]: encodeURIComponent(redone.slice(0, 300)) } : {}),
  };
}

const count = z.number().int().nonnegative();
const summarySchema = z.object({
  total: count,
  deliverable: count,
  undeliverable: count,
  risky: count,
  unknown: count,
});
/** A part's recorded counts; fields added later are kept as they are (a reader ignores what it does not know). */
const countsSchema = z.looseObject({
  lines: count,
  ok: count,
  not_found: count,
  error: count,
  invalid: count,
  credits: count,
  retryable: count.optional(),
  summary: summarySchema.optional(),
  duplicate: count.optional(),
  calls: count.optional(),
});
const metadataSchema = z.object({
  [COUNTS_META]: z.string(),
  [SHA_META]: z.string().regex(/^[0-9a-f]{64}$/),
  [STATUS_META]: z.enum(['done', 'failed', 'partial']),
  [CALLS_META]: z.string().optional(),
  [TABLE_META]: z.enum(TABLE_NAMES).optional(),
  [FORMAT_META]: z.enum(OUTPUT_FORMATS).optional(),
  [BYTES_META]: z.string().regex(/^\d{1,15}$/),
  [OWNER_META]: z.string(),
  [OPTIONS_META]: z.string(),
  [INDEX_META]: z.string().regex(/^\d{1,9}$/),
  [REDONE_META]: z.string().optional(),
});

/** Whatever object is at a key, to tell whether it changed: its size, recorded sha256 and calls (none if absent). */
function fingerprintOf(info: ObjectInfo | undefined): string | undefined {
  if (!info) return undefined;
  return `${info.size}:${info.metadata[SHA_META] ?? ''}:${info.metadata[CALLS_META] ?? ''}`;
}

/** The fingerprint of the object at `key` now (see PartRead), undefined when there is none. */
export async function partFingerprint(store: Store, key: string): Promise<string | undefined> {
  return fingerprintOf(await store.stat(key));
}

/**
 * What a part's metadata says, checked against whose it must be, without reading the part (a finalize over a listing):
 * metadata that parses, the expected owner, options and index, and the recorded size. `distrusted` when it does not.
 */
export function storedPart(info: ObjectInfo | undefined, expected: PartIdentity): PartRead {
  if (!info) return {};
  const fingerprint = fingerprintOf(info);
  const distrust = (distrusted: string): PartRead => ({ distrusted, ...(fingerprint ? { fingerprint } : {}) });
  const meta = metadataSchema.safeParse(info.metadata);
  if (!meta.success) return distrust(`its metadata is missing or invalid (${describeIssue(meta.error)})`);
  const m = meta.data;
  let counts: PartCounts;
  try {
    const parsed = countsSchema.safeParse(JSON.parse(m[COUNTS_META]));
    if (!parsed.success) return distrust(`its recorded counts are invalid (${describeIssue(parsed.error)})`);
    counts = parsed.data;
  } catch {
    return distrust('its recorded counts are not JSON');
  }
  const owner = safeDecode(m[OWNER_META]);
  if (owner !== expected.owner) return distrust(`it was written by ${JSON.stringify(owner)}, not this job`);
  if (m[OPTIONS_META] !== expected.options) return distrust('it was written under other options');
  if (Number(m[INDEX_META]) !== expected.index) return distrust(`it holds batch ${m[INDEX_META]}, not this one`);
  if (Number(m[BYTES_META]) !== info.size)
    return distrust(`it is ${info.size} bytes where ${m[BYTES_META]} were written`);
  const redone = m[REDONE_META] === undefined ? undefined : safeDecode(m[REDONE_META]);
  return {
    part: {
      counts,
      failed: m[STATUS_META] === 'failed',
      partial: m[STATUS_META] === 'partial',
      bytes: info.size,
      sha256: m[SHA_META],
      calls: (m[CALLS_META] ?? '').split(',').filter((id) => id !== ''),
      ...(m[TABLE_META] ? { table: m[TABLE_META] } : {}),
      ...(m[FORMAT_META] ? { format: m[FORMAT_META] } : {}),
      ...(redone ? { redone } : {}),
    },
    ...(fingerprint ? { fingerprint } : {}),
  };
}

/**
 * A JSONL part to reuse, or why the one present cannot be: its metadata (`storedPart`), then its bytes read back (one
 * batch) for the recorded sha256 and line count. A part that does not prove itself is treated as absent.
 */
export async function readPart(store: Store, key: string, expected: PartIdentity): Promise<PartRead> {
  const found = storedPart(await store.stat(key), expected);
  if (!found.part) return found;
  const { fingerprint } = found;
  const distrust = (distrusted: string): PartRead => ({ distrusted, ...(fingerprint ? { fingerprint } : {}) });
  const problem = partBytesProblem(key, await readAll(await store.openRead(key)), found.part);
  return problem ? distrust(problem) : found;
}

/**
 * Why `raw`, the bytes of the part at `key`, are not what its metadata recorded (`part`), or undefined: its size, its
 * sha256, and its line count (but for a table part in CSV or Parquet).
 */
export function partBytesProblem(key: string, raw: Buffer, part: StoredPart): string | undefined {
  if (raw.length !== part.bytes) return `it is ${raw.length} bytes where ${part.bytes} were written`;
  if (createHash('sha256').update(raw).digest('hex') !== part.sha256) {
    return 'its bytes do not have the sha256 it recorded';
  }
  // A table part in CSV (a header line) or Parquet has no line per row to count.
  if (part.format !== undefined && part.format !== 'jsonl') return undefined;
  let text: Buffer;
  try {
    text = key.endsWith('.gz') ? gunzipSync(raw) : raw;
  } catch {
    return 'it is not valid gzip';
  }
  const lines = countLines(text);
  return lines === part.counts.lines ? undefined : `it holds ${lines} lines where its counts say ${part.counts.lines}`;
}

/**
 * Why an object kept in the worker's spool (activities/jobs/spool.ts) may not be published at `key`, or undefined:
 * the proof a part found in the output passes before it is reused (`storedPart`, `partBytesProblem`), its owner being
 * the folder it is published into (a job's id, or a run under a push's or feed's name).
 */
export function spooledPartProblem(
  key: string,
  body: Buffer,
  metadata: Record<string, string> | undefined,
): string | undefined {
  const folder = key.slice(0, key.indexOf('/'));
  const meta = metadataSchema.safeParse(metadata ?? {});
  if (!meta.success) return `its metadata is missing or invalid (${describeIssue(meta.error)})`;
  const owner = safeDecode(meta.data[OWNER_META]);
  if (owner !== folder && !owner.startsWith(`${folder}/`)) return `it was written by ${JSON.stringify(owner)}`;
  const found = storedPart(
    { key, size: body.length, metadata: meta.data },
    { owner, options: meta.data[OPTIONS_META], index: Number(meta.data[INDEX_META]) },
  );
  if (!found.part) return found.distrusted;
  return partBytesProblem(key, body, found.part);
}

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines += 1;
  // A last line without its newline is a line too (the kit always ends one).
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? lines + 1 : lines;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join('.') || 'value'}: ${issue.message}` : 'invalid';
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

/**
 * The signals-table parts of a part as stored, one per format at `keyOf(format)` (written before the part, so
 * present when the part is: a retry that finds the part written).
 */
export async function storedSignalTableParts(
  store: Store,
  formats: readonly OutputFormat[],
  identity: PartIdentity,
  keyOf: (format: OutputFormat) => string,
): Promise<ManifestPart[]> {
  const found: ManifestPart[] = [];
  for (const format of formats) {
    const key = keyOf(format);
    // A table (CSV, Parquet) is checked by its metadata and size: its lines are not JSON lines to count.
    const part = storedPart(await store.stat(key), identity).part;
    if (part)
      found.push({ key, lines: part.counts.lines, bytes: part.bytes, sha256: part.sha256, table: 'signals', format });
  }
  return found;
}

/**
 * The identity to write a batch's part under, after `found` was looked for: it carries why a part there was not
 * trusted (or the note an earlier rewrite carried), so that the manifest reports the batch as redone.
 */
export function redoneIdentity(identity: PartIdentity, found: PartRead): PartIdentity {
  const redone = found.distrusted ?? found.part?.redone;
  return redone ? { ...identity, redone } : identity;
}
