import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { BulkVerifyError, VerifyEmailsResult } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type BatchItem, readBatch } from './batch-file.ts';
import { toActivityFailure } from './failures.ts';
import { partKey } from './layout.ts';
import { readPart, readPartLines, writePart, zeroCounts } from './parts.ts';
import type { BatchResult, JobRef, PartCounts, VerificationSummary } from './types.ts';
import { CallMarker } from './unsaved.ts';

export interface VerifyBatchRequest {
  job: JobRef;
  index: number;
}

/** Error codes a later call may fix: the service's upstream check failed (free, spec 8). */
const RETRYABLE_CODES = new Set(['upstream_failure']);

/** One line of a verification part. */
interface VerifyLine {
  email: string;
  status: 'ok' | 'error';
  row: number;
  input: string;
  error?: { code: string; message: string };
  [field: string]: unknown;
}

/**
 * Verifies chunk `index` (up to 1,000 distinct addresses) with one bulk call and publishes its part: one line per
 * address, verified or an error record. Addresses whose upstream check failed are counted as `retryable` and the
 * part is marked failed; calling this again for the same chunk verifies exactly those addresses (they cost nothing
 * when they fail and 1 credit when they pass) and republishes the part with them merged in. A part with nothing
 * left to retry is returned from its recorded counts without calling the API.
 */
export async function verifyBatch(
  client: SignalClient,
  store: Store,
  request: VerifyBatchRequest,
): Promise<BatchResult> {
  const { job, index } = request;
  const key = partKey(job, index);
  const existing = await readPart(store, key);
  if (existing && !existing.failed) return { index, reused: true, failed: false, counts: existing.counts };

  let lines: VerifyLine[];
  let counts: PartCounts;
  if (existing && (existing.counts.retryable ?? 0) > 0) {
    lines = (await readPartLines(store, job, key)) as VerifyLine[];
    counts = existing.counts;
  } else {
    const items = await readBatch(store, job, index);
    lines = items.map(pending);
    counts = { ...zeroCounts(), lines: lines.length, error: lines.length, retryable: lines.length };
  }

  const todo = lines.filter(isRetryable);
  const response = await verifyOnce(client, store, job, index, todo);
  const verified = indexByEmail(response.verifications);
  const failed = indexByEmail(
    response.errors.filter((entry): entry is BulkVerifyError & { email: string } => !!entry.email),
  );
  const merged = lines.map((line) => {
    if (!isRetryable(line)) return line;
    const verification = lookup(verified, line.email);
    if (verification) {
      const { email: _email, ...rest } = verification;
      return { email: line.email, status: 'ok', row: line.row, input: line.input, ...rest } satisfies VerifyLine;
    }
    const error = lookup(failed, line.email);
    return {
      email: line.email,
      status: 'error',
      row: line.row,
      input: line.input,
      error: error
        ? { code: error.code, message: error.message ?? error.code }
        : { code: 'missing_result', message: 'the service returned no result for this address' },
    } satisfies VerifyLine;
  });
  const next = recount(merged, counts.credits + response.credits, counts.summary, response.summary);
  const stillFailing = (next.retryable ?? 0) > 0;
  await writePart(store, job, key, merged, next, stillFailing);
  await response.marker.saved();
  return { index, reused: false, failed: stillFailing, counts: next };
}

async function verifyOnce(
  client: SignalClient,
  store: Store,
  job: JobRef,
  index: number,
  todo: VerifyLine[],
): Promise<VerifyEmailsResult & { marker: CallMarker }> {
  const marker = await CallMarker.begin(store, job, index);
  try {
    const response = await client.verifyEmails({ emails: todo.map((line) => line.email) }, { retry: false });
    return Object.assign(response, { marker });
  } catch (error) {
    await marker.failed(error);
    throw toActivityFailure(error);
  }
}

/** A line not verified yet: an upstream failure to be tried (the first call treats every line so). */
function pending(item: BatchItem): VerifyLine {
  return {
    email: item.v,
    status: 'error',
    row: item.row,
    input: item.raw,
    error: { code: 'upstream_failure', message: 'not verified yet' },
  };
}

function isRetryable(line: VerifyLine): boolean {
  return line.status === 'error' && RETRYABLE_CODES.has(line.error?.code ?? '');
}

function recount(
  lines: VerifyLine[],
  credits: number,
  before: VerificationSummary | undefined,
  add: VerificationSummary,
): PartCounts {
  const counts: PartCounts = { ...zeroCounts(), lines: lines.length, credits, retryable: 0 };
  for (const line of lines) {
    if (line.status === 'ok') counts.ok += 1;
    else counts.error += 1;
    if (isRetryable(line)) counts.retryable = (counts.retryable ?? 0) + 1;
  }
  const summary: VerificationSummary = before
    ? { ...before }
    : { total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 };
  summary.total += add.total;
  summary.deliverable += add.deliverable;
  summary.undeliverable += add.undeliverable;
  summary.risky += add.risky;
  summary.unknown += add.unknown;
  counts.summary = summary;
  return counts;
}

function indexByEmail<T extends { email: string }>(entries: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const entry of entries) map.set(entry.email.toLowerCase(), entry);
  return map;
}

function lookup<T>(map: Map<string, T>, email: string): T | undefined {
  return map.get(email.toLowerCase());
}
