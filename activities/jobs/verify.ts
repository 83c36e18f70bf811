import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { BulkVerifyError } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readBatch } from './batch-file.ts';
import { toActivityFailure } from './failures.ts';
import { partKey } from './layout.ts';
import { readPart, writePart, zeroCounts } from './parts.ts';
import type { BatchResult, JobRef, VerificationSummary } from './types.ts';

export interface VerifyBatchRequest {
  job: JobRef;
  index: number;
}

/**
 * Verifies chunk `index` (up to 1,000 distinct addresses) with one bulk call and publishes its part: one line per
 * address, verified or an error record. The service's own summary of the chunk is recorded with the part.
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

  const items = await readBatch(store, job, index);
  let response: Awaited<ReturnType<SignalClient['verifyEmails']>>;
  try {
    response = await client.verifyEmails({ emails: items.map((item) => item.v) }, { retry: false });
  } catch (error) {
    throw toActivityFailure(error);
  }
  const verified = indexByEmail(response.verifications);
  const failed = indexByEmail(
    response.errors.filter((entry): entry is BulkVerifyError & { email: string } => !!entry.email),
  );
  const summary: VerificationSummary = {
    total: response.summary.total,
    deliverable: response.summary.deliverable,
    undeliverable: response.summary.undeliverable,
    risky: response.summary.risky,
    unknown: response.summary.unknown,
  };
  const counts = { ...zeroCounts(), credits: response.credits, summary };
  const lines = items.map((item) => {
    counts.lines += 1;
    const verification = lookup(verified, item.v);
    if (verification) {
      counts.ok += 1;
      const { email: _email, ...rest } = verification;
      return { email: item.v, status: 'ok', row: item.row, input: item.raw, ...rest };
    }
    counts.error += 1;
    const error = lookup(failed, item.v);
    return {
      email: item.v,
      status: 'error',
      row: item.row,
      input: item.raw,
      error: error
        ? { code: error.code, message: error.message ?? error.code }
        : { code: 'missing_result', message: 'the service returned no result for this address' },
    };
  });
  await writePart(store, job, key, lines, counts);
  return { index, reused: false, failed: false, counts };
}

function indexByEmail<T extends { email: string }>(entries: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const entry of entries) map.set(entry.email.toLowerCase(), entry);
  return map;
}

function lookup<T>(map: Map<string, T>, email: string): T | undefined {
  return map.get(email.toLowerCase());
}
