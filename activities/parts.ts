import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { readAll, writeBody } from '../connectors/storage/common.ts';
import { BucketNotFoundError, StorageError } from '../connectors/storage/errors.ts';
import type { ObjectInfo, Store } from '../connectors/storage/store.ts';
import type { Compression, PartCounts } from './jobs/types.ts';

/**
 * The one writer of parts: every JSONL part the kit publishes (bulk job batches, scheduled-push batches, webhook
 * collector parts) goes through `writePart`, atomically, with one metadata convention so that a re-run or a recovery
 * reads what a part holds without reading the part: its counts (`signal-kit-counts`, JSON), its sha256
 * (`signal-kit-sha256`), its size, its status (`signal-kit-status`) and whose it is (`signal-kit-owner`,
 * `signal-kit-options`, `signal-kit-index`). Manifests, written last, go through `writeManifest`.
 * An intent export's single part is streamed (`openPartStream`); it is recorded in the export's own state instead.
 *
 * A part found in the output is trusted only when it proves itself (`readPart`): metadata that parses, names the
 * reader's owner, options and index, and bytes of the recorded size, sha256 and line count. Anything else is treated
 * as absent, so the batch is done again, and the part written then records why (`signal-kit-redone`).
 */
const COUNTS_META = 'signal-kit-counts';
const SHA_META = 'signal-kit-sha256';
const STATUS_META = 'signal-kit-status';
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

export interface StoredPart {
  counts: PartCounts;
  failed: boolean;
  partial: boolean;
  bytes: number;
  sha256: string;
  /** Why the part this one replaced was not trusted, when it replaced one. */
  redone?: string;
}

/** A part looked for in the output: `part` when it proved itself; `distrusted` says why one present did not. */
export interface PartRead {
  part?: StoredPart;
  distrusted?: string;
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

/** A storage failure that may pass (the server down or restarting), unlike a missing bucket or a malformed URL. */
function isTransient(error: unknown): boolean {
  return error instanceof StorageError && !(error instanceof BucketNotFoundError);
}

/** Publishes a part and its counts in one atomic step, trying again while the storage is unreachable. */
export async function writePart(
  store: Store,
  compression: Compression | undefined,
  key: string,
  records: readonly unknown[],
  counts: PartCounts,
  status: PartStatus | boolean,
  identity: PartIdentity,
): Promise<StoredPart> {
  return writeEncodedPart(store, compression, key, encodePart(compression, records), counts, status, identity);
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
  identity: PartIdentity,
): Promise<StoredPart> {
  const resolved: PartStatus = status === true ? 'failed' : status === false ? 'done' : status;
  const sha256 = createHash('sha256').update(body).digest('hex');
  for (let attempt = 0; ; attempt++) {
    try {
      const stored = await writePartOnce(store, compression, key, body, sha256, counts, resolved, identity);
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
  compression: Compression | undefined,
  key: string,
  body: Buffer,
  sha256: string,
  counts: PartCounts,
  status: PartStatus,
  identity: PartIdentity,
): Promise<StoredPart> {
  const { redone } = identity;
  await writeBody(store, key, body, {
    contentType: partContentType(compression),
    metadata: {
      [COUNTS_META]: JSON.stringify(counts),
      [SHA_META]: sha256,
      [STATUS_META]: status,
      [BYTES_META]: String(body.length),
      // Metadata travels as HTTP headers on S3 and GCS: only ASCII there.
      [OWNER_META]: encodeURIComponent(identity.owner),
      [OPTIONS_META]: identity.options,
      [INDEX_META]: String(identity.index),
      ...(redone ? { [REDONE_META]: encodeURIComponent(redone.slice(0, 300)) } : {}),
    },
  });
  return {
    counts,
    failed: status === 'failed',
    partial: status === 'partial',
    bytes: body.length,
    sha256,
    ...(redone ? { redone } : {}),
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
const countsSchema = z.object({
  lines: count,
  ok: count,
  not_found: count,
  error: count,
  invalid: count,
  credits: count,
  retryable: count.optional(),
  summary: summarySchema.optional(),
});
const metadataSchema = z.object({
  [COUNTS_META]: z.string(),
  [SHA_META]: z.string().regex(/^[0-9a-f]{64}$/),
  [STATUS_META]: z.enum(['done', 'failed', 'partial']),
  [BYTES_META]: z.string().regex(/^\d{1,15}$/),
  [OWNER_META]: z.string(),
  [OPTIONS_META]: z.string(),
  [INDEX_META]: z.string().regex(/^\d{1,9}$/),
  [REDONE_META]: z.string().optional(),
});

/**
 * What a part's metadata says, checked against whose it must be, without reading the part (a finalize over a listing):
 * metadata that parses, the expected owner, options and index, and the recorded size. `distrusted` when it does not.
 */
export function storedPart(info: ObjectInfo | undefined, expected: PartIdentity): PartRead {
  if (!info) return {};
  const meta = metadataSchema.safeParse(info.metadata);
  if (!meta.success) return { distrusted: `its metadata is missing or invalid (${describeIssue(meta.error)})` };
  const m = meta.data;
  let counts: PartCounts;
  try {
    const parsed = countsSchema.safeParse(JSON.parse(m[COUNTS_META]));
    if (!parsed.success) return { distrusted: `its recorded counts are invalid (${describeIssue(parsed.error)})` };
    counts = parsed.data;
  } catch {
    return { distrusted: 'its recorded counts are not JSON' };
  }
  const owner = safeDecode(m[OWNER_META]);
  if (owner !== expected.owner) return { distrusted: `it was written by ${JSON.stringify(owner)}, not this job` };
  if (m[OPTIONS_META] !== expected.options) return { distrusted: 'it was written under other options' };
  if (Number(m[INDEX_META]) !== expected.index) return { distrusted: `it holds batch ${m[INDEX_META]}, not this one` };
  if (Number(m[BYTES_META]) !== info.size) {
    return { distrusted: `it is ${info.size} bytes where ${m[BYTES_META]} were written` };
  }
  const redone = m[REDONE_META] === undefined ? undefined : safeDecode(m[REDONE_META]);
  return {
    part: {
      counts,
      failed: m[STATUS_META] === 'failed',
      partial: m[STATUS_META] === 'partial',
      bytes: info.size,
      sha256: m[SHA_META],
      ...(redone ? { redone } : {}),
    },
  };
}

/**
 * A part to reuse, or why the one present cannot be: its metadata (`storedPart`), then its bytes read back (one
 * batch) for the recorded sha256 and line count. A part that does not prove itself is treated as absent.
 */
export async function readPart(store: Store, key: string, expected: PartIdentity): Promise<PartRead> {
  const found = storedPart(await store.stat(key), expected);
  if (!found.part) return found;
  const raw = await readAll(await store.openRead(key));
  if (raw.length !== found.part.bytes)
    return { distrusted: `it is ${raw.length} bytes where ${found.part.bytes} were written` };
  if (createHash('sha256').update(raw).digest('hex') !== found.part.sha256) {
    return { distrusted: 'its bytes do not have the sha256 it recorded' };
  }
  let text: Buffer;
  try {
    text = key.endsWith('.gz') ? gunzipSync(raw) : raw;
  } catch {
    return { distrusted: 'it is not valid gzip' };
  }
  const lines = countLines(text);
  if (lines !== found.part.counts.lines) {
    return { distrusted: `it holds ${lines} lines where its counts say ${found.part.counts.lines}` };
  }
  return found;
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
