/** What every paid batch shares, whatever its kind: its result type, the spool published first, a reused part. */
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { PartIdentity, PartRead, StoredPart } from '../run/parts.ts';
import type { BatchResult } from '../run/types.ts';
import type { AttemptContext } from './paid-call.ts';

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
 * Publishes what the worker's spool kept of this job (answers the output refused earlier; a push run: its folders)
 * before anything is paid for; while the output still refuses them, this throws the refusal and no call is made.
 */
export async function publishSpooled(
  store: Store,
  owner: { jobId: string } | readonly string[],
  attempt: AttemptContext,
): Promise<void> {
  if (attempt.spool)
    await attempt.spool.publish(store, Array.isArray(owner) ? owner : `${(owner as { jobId: string }).jobId}/`);
}

/** A batch answered by a part already published (by an earlier run, or by another attempt that saved it first). */
export function reusedResult(index: number, part: StoredPart): BatchResult {
  return { index, reused: true, failed: false, counts: part.counts };
}
