import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type PartIdentity, type PartRead, readPart, type StoredPart } from '../parts.ts';
import { jobPrefix } from './layout.ts';
import type { AttemptContext } from './paid-call.ts';
import { linesPartIdentity } from './part-identity.ts';
import type { BatchResult, JobRef } from './types.ts';

/**
 * An activity that answers one batch with paid calls (bulk enrich, single calls, contacts, bulk verify, a push's
 * fetch): the worker's API client, the job's output, the request, and the attempt running it (cancellation, spool).
 */
export type PaidBatchActivity<Request> = (
  client: SignalClient,
  store: Store,
  request: Request,
  attempt?: AttemptContext,
) => Promise<BatchResult>;

/** A job's batch whose part is not complete yet: its part's key and identity, and what was found there. */
export interface OpenBatch {
  key: string;
  identity: PartIdentity;
  /** The part as read (a failed or partial one keeps its paid lines), or why one there was not trusted. */
  found: PartRead;
}

/**
 * A job's paid batch activity, every kind starting the same way: what the worker's spool kept of the job is
 * published first (so that an answer the output refused in an earlier run is found, not paid again), then the
 * batch's part (`keyOf`) is read. A complete part is the batch's result, reused without a call; otherwise `answer`
 * pays for what the part lacks and publishes it (through `publishPaidLines`, which spools it if the output refuses).
 */
export function paidBatchActivity<Request extends { job: JobRef; index: number }>(
  keyOf: (request: Request) => string,
  answer: (
    client: SignalClient,
    store: Store,
    request: Request,
    batch: OpenBatch,
    attempt: AttemptContext,
  ) => Promise<BatchResult>,
): PaidBatchActivity<Request> {
  return async (client, store, request, attempt = { attempt: 1 }) => {
    const { job, index } = request;
    const key = keyOf(request);
    const identity = linesPartIdentity(job, key);
    await publishSpooled(store, job, attempt);
    const found = await readPart(store, key, identity);
    if (found.part && !found.part.failed && !found.part.partial) return reusedResult(index, found.part);
    return answer(client, store, request, { key, identity, found }, attempt);
  };
}

/**
 * Publishes what the worker's spool kept of this job (answers the output refused earlier; a push run: its folders)
 * before anything is paid for; while the output still refuses them, this throws the refusal and no call is made.
 */
export async function publishSpooled(
  store: Store,
  owner: JobRef | readonly string[],
  attempt: AttemptContext,
): Promise<void> {
  if (attempt.spool) await attempt.spool.publish(store, Array.isArray(owner) ? owner : jobPrefix(owner as JobRef));
}

/** A batch answered by a part already published (by an earlier run, or by another attempt that saved it first). */
export function reusedResult(index: number, part: StoredPart): BatchResult {
  return { index, reused: true, failed: false, counts: part.counts };
}
