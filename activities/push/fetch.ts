import { gunzipSync } from 'node:zlib';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { BulkEnrichItem, Signal } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { toActivityFailure } from '../jobs/failures.ts';
import { readPart, writePart, zeroCounts } from '../jobs/parts.ts';
import type { BatchResult } from '../jobs/types.ts';
import { batchDoneKey, partJob, pushBatchKey, pushPartKey } from './layout.ts';
import type { PushBatch, PushBatchRecord, PushBatchRequest, PushRunRef } from './types.ts';
import { isLater } from './watermarks.ts';

/** Errors that concern the request itself: its domains become error records, the run goes on. */
const RECORD_LEVEL_ERRORS = new Set(['ValidationError', 'NotFoundError']);

/** One output line: a new signal, with the watchlist domain it was found for. */
export type PushLine = { domain: string } & Signal;

/**
 * Fetches batch `index` of a run with one bulk call (`detected_after` = the batch's shared watermark), writes its
 * new signals as `part-<index>.jsonl.gz` and then records the batch (`done-<index>.json`).
 *
 * Never pays twice: a recorded batch returns its counts; a batch whose part was written but not yet recorded
 * (a crash in between) is recorded from the part's own lines, without calling the API.
 */
export async function fetchPushBatch(
  client: SignalClient,
  store: Store,
  request: PushBatchRequest,
): Promise<BatchResult> {
  const { run, index, filters } = request;
  const recorded = await readBatchRecord(store, run, index);
  if (recorded && !recorded.failed) return { index, reused: true, failed: false, counts: recorded.counts };

  const batch = JSON.parse(await store.readText(pushBatchKey(run, index))) as PushBatch;
  const key = pushPartKey(run, index);
  const written = await readPart(store, key);
  if (written && !written.failed) {
    const record = recordFromPart(batch, await readLines(store, key), written.counts, filters.limit);
    record.part = { key, lines: written.counts.lines, bytes: written.bytes, sha256: written.sha256 };
    await writeBatchRecord(store, run, record);
    return { index, reused: true, failed: false, counts: record.counts };
  }

  let results: BulkEnrichItem[];
  let credits = 0;
  try {
    const response = await client.enrichCompanies(
      {
        domains: batch.domains,
        ...(batch.detected_after ? { detected_after: batch.detected_after } : {}),
        ...(filters.signal_types ? { signal_types: filters.signal_types } : {}),
        ...(filters.signal_subtypes ? { signal_subtypes: filters.signal_subtypes } : {}),
        limit: filters.limit,
      },
      { retry: false },
    );
    results = response.results;
    credits = response.credits;
  } catch (error) {
    if (!(error instanceof Error) || !RECORD_LEVEL_ERRORS.has(error.name)) throw toActivityFailure(error);
    const code = (error as { code?: string }).code ?? 'request_rejected';
    results = batch.domains.map((domain) => ({ domain, status: 'error', error: { code, message: error.message } }));
  }

  const { lines, record } = collect(batch, results, filters.limit);
  record.counts.credits = credits;
  if (lines.length > 0) {
    const part = await writePart(store, partJob(run), key, lines, record.counts);
    record.part = { key, lines: lines.length, bytes: part.bytes, sha256: part.sha256 };
  }
  await writeBatchRecord(store, run, record);
  return { index, reused: false, failed: false, counts: record.counts };
}

/**
 * Turns one bulk response into output lines (newest first, as the service returns them) and the batch record.
 * A signal at or before the batch's watermark is not written again (in case a service treats `detected_after` as
 * inclusive).
 */
export function collect(
  batch: PushBatch,
  results: readonly BulkEnrichItem[],
  limit: number,
): { lines: PushLine[]; record: PushBatchRecord } {
  const byDomain = new Map(results.map((result) => [result.domain.toLowerCase(), result]));
  const record = emptyRecord(batch);
  const lines: PushLine[] = [];
  const after = batch.detected_after === null ? undefined : Date.parse(batch.detected_after);
  for (const domain of batch.domains) {
    const result = byDomain.get(domain);
    if (!result) {
      record.counts.error += 1;
      record.errors.push({ domain, code: 'missing_result', message: 'the service returned no result for this domain' });
      continue;
    }
    if (result.status === 'not_found') {
      record.counts.not_found += 1;
      continue;
    }
    if (result.status === 'error') {
      record.counts.error += 1;
      record.errors.push({ domain, code: result.error.code, message: result.error.message });
      continue;
    }
    record.counts.ok += 1;
    if (result.signals.length >= limit) record.truncated.push(domain);
    for (const signal of result.signals) {
      if (after !== undefined && Date.parse(signal.detected_at) <= after) continue;
      lines.push({ domain, ...signal });
      if (isLater(signal.detected_at, record.marks[domain])) record.marks[domain] = signal.detected_at;
    }
  }
  record.counts.lines = lines.length;
  return { lines, record };
}

/** Rebuilds a batch record from a part already written (its lines carry every domain's signals). */
function recordFromPart(
  batch: PushBatch,
  lines: PushLine[],
  counts: PushBatchRecord['counts'],
  limit: number,
): PushBatchRecord {
  const record = emptyRecord(batch);
  record.counts = counts;
  const perDomain = new Map<string, number>();
  for (const line of lines) {
    perDomain.set(line.domain, (perDomain.get(line.domain) ?? 0) + 1);
    if (isLater(line.detected_at, record.marks[line.domain])) record.marks[line.domain] = line.detected_at;
  }
  for (const [domain, count] of perDomain) if (count >= limit) record.truncated.push(domain);
  return record;
}

/** Records a batch whose retries are spent: its domains keep their watermarks, so the next run asks again. */
export async function recordFailedPushBatch(
  store: Store,
  request: { run: PushRunRef; index: number; message: string },
): Promise<BatchResult> {
  const { run, index, message } = request;
  const batch = JSON.parse(await store.readText(pushBatchKey(run, index))) as PushBatch;
  const record = emptyRecord(batch);
  record.failed = true;
  record.counts.error = batch.domains.length;
  record.errors = batch.domains.map((domain) => ({ domain, code: 'batch_failed', message }));
  await writeBatchRecord(store, run, record);
  return { index, reused: false, failed: true, counts: record.counts };
}

export async function readBatchRecord(
  store: Store,
  run: PushRunRef,
  index: number,
): Promise<PushBatchRecord | undefined> {
  const key = batchDoneKey(run, index);
  if (!(await store.exists(key))) return undefined;
  return JSON.parse(await store.readText(key)) as PushBatchRecord;
}

async function writeBatchRecord(store: Store, run: PushRunRef, record: PushBatchRecord): Promise<void> {
  await store.writeText(batchDoneKey(run, record.index), JSON.stringify(record), { contentType: 'application/json' });
}

async function readLines(store: Store, key: string): Promise<PushLine[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRead(key)) chunks.push(chunk as Buffer);
  const text = gunzipSync(Buffer.concat(chunks)).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PushLine);
}

function emptyRecord(batch: PushBatch): PushBatchRecord {
  return {
    index: batch.index,
    detected_after: batch.detected_after,
    counts: zeroCounts(),
    marks: {},
    truncated: [],
    errors: [],
    failed: false,
  };
}
