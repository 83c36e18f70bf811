import type { BulkVerifyError, VerifyEmailsResult } from '../../connectors/signal-api/types.ts';
import { reusedResult } from '../paid/paid-batch.ts';
import { lostRace, publishPaidLines, sendPaidCall } from '../paid/paid-call.ts';
import { BATCH_FAILED } from '../paid/paid-lines.ts';
import { type EncodedTablePart, encodePart, readPartLines, zeroCounts } from '../run/parts.ts';
import { type BatchItem, readBatch, recordFields } from './batch-file.ts';
import { partKey } from './layout.ts';
import { paidBatchActivity } from './paid-batch.ts';
import { encodeJobTables } from './tables.ts';
import type { JobRef, PartCounts, VerificationSummary } from './types.ts';

export interface VerifyBatchRequest {
  job: JobRef;
  index: number;
  /**
   * When set, the part's credits may not go over this: only as many addresses as fit at 1 credit each are sent; the
   * rest become `budget_exhausted` lines and the part is published `partial` (a later call sends them).
   */
  creditCap?: number;
}

/** The error of an address the credit budget did not reach; a later call sends it. */
const NOT_SENT = {
  code: 'budget_exhausted',
  message: 'not verified: the credit budget ran out first (run again with a higher --max-credits)',
};

/**
 * Error codes a later call may fix: the service's upstream check failed (free, spec 8), or the batch's retries were
 * spent before the address was answered.
 */
const RETRYABLE_CODES = new Set(['upstream_failure', BATCH_FAILED, NOT_SENT.code]);

/** One line of a verification part. */
interface VerifyLine {
  email: string;
  status: 'ok' | 'error';
  row: number;
  record_id: string | null;
  columns?: Record<string, string>;
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
export const verifyBatch = paidBatchActivity<VerifyBatchRequest>(
  ({ job, index }) => partKey(job, index),
  async (client, store, request, { key, identity, found }, attempt) => {
    const { job, index } = request;
    const existing = found.part;

    // A failed part keeps every answer already paid for; only its upstream failures and unanswered lines are sent.
    const items = await readBatch(store, job, index);
    const earlier = new Map<string, VerifyLine>();
    if (existing) for (const line of await readPartLines<VerifyLine>(store, key)) earlier.set(line.email, line);
    const lines = items.map((item) => earlier.get(item.v) ?? pending(item));
    const credits = existing?.counts.credits ?? 0;

    const todo = lines.filter(isRetryable);
    const fit = request.creditCap === undefined ? todo.length : Math.max(0, Math.floor(request.creditCap - credits));
    if (fit === 0 && todo.length > 0) {
      // Not even one address fits what is left of the budget: nothing is sent.
      return { index, reused: true, failed: false, partial: true, counts: existing?.counts ?? recount(lines, credits) };
    }
    const unsent = new Set(todo.slice(fit).map((line) => line.email));
    const sent = todo.slice(0, fit);
    const { response, marker } = await sendPaidCall(store, job, index, attempt, (call) =>
      client.verifyEmails({ emails: sent.map((line) => line.email) }, call),
    );
    // Encoded before anything is awaited, so that the parsed answer is garbage while the part is being written.
    const { body, tables, counts } = assemblePart(job, index, lines, response, credits, unsent);
    const partial = unsent.size > 0;
    const stillFailing = (counts.retryable ?? 0) > 0;
    const status = partial ? 'partial' : stillFailing ? 'failed' : 'done';
    const published = await publishPaidLines(
      store,
      key,
      found,
      identity,
      [{ marker, credits: response.credits }],
      { compression: job.compression, body, tables, counts, status },
      attempt.spool,
    );
    if (published.lost) return reusedResult(index, lostRace(key, store, published.part));
    return { index, reused: false, failed: !partial && stillFailing, ...(partial ? { partial } : {}), counts };
  },
);

/** The part's lines (this call's answers merged into the earlier ones), encoded, and their counts. */
function assemblePart(
  job: JobRef,
  index: number,
  lines: VerifyLine[],
  response: VerifyEmailsResult,
  credits: number,
  unsent: Set<string>,
): { body: Buffer; tables: EncodedTablePart[]; counts: PartCounts } {
  const verified = indexByEmail(response.verifications);
  const failed = indexByEmail(
    response.errors.filter((entry): entry is BulkVerifyError & { email: string } => !!entry.email),
  );
  const merged = lines.map((line) => {
    if (!isRetryable(line)) return line;
    if (unsent.has(line.email)) return { ...line, error: NOT_SENT } satisfies VerifyLine;
    const verification = lookup(verified, line.email);
    if (verification) {
      const { email: _email, ...rest } = verification;
      return { ...carried(line), status: 'ok', ...rest } satisfies VerifyLine;
    }
    const error = lookup(failed, line.email);
    return {
      ...carried(line),
      status: 'error',
      error: error
        ? { code: error.code, message: error.message ?? error.code }
        : { code: 'missing_result', message: 'the service returned no result for this address' },
    } satisfies VerifyLine;
  });
  const counts = recount(merged, credits + response.credits);
  return {
    body: encodePart(job.compression, merged),
    tables: encodeJobTables(job, partKey(job, index), merged),
    counts,
  };
}

/** A line not verified yet: an upstream failure to be tried (the first call treats every line so). */
function pending(item: BatchItem): VerifyLine {
  return {
    email: item.v,
    status: 'error',
    row: item.row,
    ...recordFields(item),
    input: item.raw,
    error: { code: 'upstream_failure', message: 'not verified yet' },
  };
}

/** What a line keeps of its input row whatever its answer. */
function carried(line: VerifyLine) {
  const { email, row, record_id, columns, input } = line;
  return { email, row, record_id, ...(columns ? { columns } : {}), input };
}

function isRetryable(line: VerifyLine): boolean {
  return line.status === 'error' && RETRYABLE_CODES.has(line.error?.code ?? '');
}

const RESULTS = new Set(['deliverable', 'undeliverable', 'risky', 'unknown']);

/** Counts and the verification summary of a part, from its lines (so they hold across retries and re-runs). */
function recount(lines: VerifyLine[], credits: number): PartCounts {
  const counts: PartCounts = { ...zeroCounts(), lines: lines.length, credits, retryable: 0 };
  const summary: VerificationSummary = { total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 };
  for (const line of lines) {
    if (line.status === 'ok') counts.ok += 1;
    else counts.error += 1;
    if (isRetryable(line)) counts.retryable = (counts.retryable ?? 0) + 1;
    const result = String(line['result']);
    if (line.status === 'ok' && RESULTS.has(result)) {
      summary.total += 1;
      summary[result as keyof Omit<VerificationSummary, 'total'>] += 1;
    }
  }
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
