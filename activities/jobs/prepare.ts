import { Context } from '@temporalio/activity';
import { InputError } from '../../connectors/errors.ts';
import { domainFromWebsite } from '../../connectors/normalize/domain.ts';
import { normalizeEmail } from '../../connectors/normalize/email.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { zeroCounts } from '../parts.ts';
import { FirstSeen } from './first-seen.ts';
import { type InputRecord, openInput, readInputRecords } from './input.ts';
import { batchKey, preparedKey } from './layout.ts';
import { writeJobPart } from './tables.ts';
import type { JobKind, JobRef, PreparedInput, PreparedStart } from './types.ts';

export interface PrepareRequest {
  job: JobRef;
  input: string;
  column?: string;
  batchSize: number;
}

/** Columns (CSV) or fields (JSONL) tried in order when the job names none. */
export const DEFAULT_COLUMNS: Record<string, string[]> = {
  enrich: ['domain', 'website', 'url', 'company_domain'],
  'verify-emails': ['email', 'email_address', 'address'],
};

/** Invalid records per `invalid-NNNNN` part: the number of such parts follows from the invalid rows. */
export const INVALID_PER_PART = 10_000;
const PENDING_WRITES = 8;

/**
 * Reads the input once, normalizes and dedupes its values, and writes them as batch files (`work/batch-N.jsonl`)
 * plus `invalid` records for rows that hold no usable value. Idempotent: `work/_prepared.json` is written last and
 * returned as is on a re-run.
 */
export async function prepareInput(openStore: (url: string) => Store, request: PrepareRequest): Promise<PreparedInput> {
  return (await prepare(openStore, request)) as PreparedInput;
}

/**
 * Writes only the first `batches` batch files of the input, the same files `prepareInput` writes, so that a job can
 * start calling the API while the rest is prepared; an input that ends before them is prepared whole.
 */
export async function prepareInputStart(
  openStore: (url: string) => Store,
  request: PrepareRequest & { batches: number },
): Promise<PreparedInput | PreparedStart> {
  return prepare(openStore, request, Math.max(1, request.batches));
}

async function prepare(
  openStore: (url: string) => Store,
  request: PrepareRequest,
  stopAfterBatches = Number.POSITIVE_INFINITY,
): Promise<PreparedInput | PreparedStart> {
  const { job, batchSize } = request;
  const out = openStore(job.output);
  const done = await out.stat(preparedKey(job));
  if (done) return JSON.parse(await out.readText(preparedKey(job))) as PreparedInput;

  const normalize = normalizerFor(job.kind);
  const candidates = request.column ? [request.column] : (DEFAULT_COLUMNS[job.kind] ?? []);
  let batch: string[] = [];
  let invalid: unknown[] = [];
  const stats = { rows: 0, distinct: 0, duplicates: 0, invalid: 0, batches: 0, invalidParts: 0 };
  const pending = new Set<Promise<unknown>>();
  const heartbeat = throttle(() => Context.current().heartbeat(stats.rows), 5000);

  const enqueue = async (write: Promise<unknown>) => {
    const tracked = write.finally(() => pending.delete(tracked));
    pending.add(tracked);
    if (pending.size >= PENDING_WRITES) await Promise.race(pending);
  };
  const flushBatch = async () => {
    const lines = batch.join('\n') + '\n';
    await enqueue(out.writeText(batchKey(job, stats.batches++), lines));
    batch = [];
  };
  const flushInvalid = async () => {
    const counts = { ...zeroCounts(), lines: invalid.length, invalid: invalid.length };
    await enqueue(
      writeJobPart(out, job, stats.invalidParts++, invalid as Record<string, unknown>[], counts, 'done', true),
    );
    invalid = [];
  };

  const addToBatch = async (line: string) => {
    stats.distinct += 1;
    batch.push(line);
    if (batch.length >= batchSize) await flushBatch();
  };

  // Past a size, first occurrences are sorted out on local disk, so that memory stays flat as the input grows.
  const seen = new FirstSeen();
  try {
    const source = await openInput(openStore, request.input);
    for await (const record of readInputRecords(source, candidates)) {
      if (stats.batches >= stopAfterBatches) break;
      stats.rows += 1;
      heartbeat();
      const outcome = classify(record, normalize);
      if (!outcome.ok) {
        stats.invalid += 1;
        invalid.push({
          status: 'invalid',
          row: record.row,
          record_id: null,
          raw: clipRaw(record.raw),
          error: outcome.reason,
        });
        if (invalid.length >= INVALID_PER_PART) await flushInvalid();
        continue;
      }
      const line = () => JSON.stringify({ v: outcome.value, row: record.row, raw: String(record.raw) });
      const verdict = await seen.add(outcome.value, record.row, line);
      if (verdict === 'duplicate') stats.duplicates += 1;
      else if (verdict === 'new') await addToBatch(line());
    }
    if (stats.batches < stopAfterBatches) {
      for await (const deferred of seen.drain()) {
        heartbeat();
        await addToBatch(deferred);
      }
      stats.duplicates += seen.deferredDuplicates;
    }
  } finally {
    await seen.close();
  }
  if (stats.batches >= stopAfterBatches) {
    // The input goes on: the rest (and the invalid records so far) is the whole preparation's to write.
    await Promise.all(pending);
    return { complete: false, batches: stats.batches };
  }
  if (batch.length > 0) await flushBatch();
  if (invalid.length > 0) await flushInvalid();
  await Promise.all(pending);
  if (stats.rows === 0) throw new InputError(`input ${request.input} has no data rows`);

  const prepared: PreparedInput = {
    input: request.input,
    rows: stats.rows,
    distinct: stats.distinct,
    duplicates: stats.duplicates,
    invalid: stats.invalid,
    batches: stats.batches,
    batchSize,
  };
  await out.writeText(preparedKey(job), JSON.stringify(prepared, null, 2));
  return prepared;
}

/** How a job's input values are normalized (shared with the dry run's scan). */
export const normalizerFor = (kind: JobKind) => (kind === 'verify-emails' ? normalizeEmail : domainFromWebsite);

export function classify(record: InputRecord, normalize: (raw: unknown) => ReturnType<typeof domainFromWebsite>) {
  if (record.error) return { ok: false as const, reason: record.error };
  const outcome = normalize(record.raw);
  // Bytes that are not UTF-8 were decoded as U+FFFD: say so, rather than "not a valid host name".
  if (!outcome.ok && typeof record.raw === 'string' && record.raw.includes('\uFFFD')) {
    return { ok: false as const, reason: 'not valid UTF-8 (is the file in another encoding?)' };
  }
  return outcome;
}

/** Longer raw values are cut in `invalid` records: a runaway line must not become a runaway output line. */
const RAW_LIMIT = 1_000;

function clipRaw(raw: unknown): unknown {
  if (raw === undefined) return null;
  const text =
    typeof raw === 'string' ? raw : raw !== null && typeof raw === 'object' ? JSON.stringify(raw) : undefined;
  if (text === undefined || text.length <= RAW_LIMIT) return raw;
  return `${text.slice(0, RAW_LIMIT)}… (${text.length} characters)`;
}

function throttle(fn: () => void, ms: number): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last >= ms) {
      last = now;
      fn();
    }
  };
}
