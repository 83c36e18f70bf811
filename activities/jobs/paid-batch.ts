import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type OpenBatch, type PaidBatchActivity, publishSpooled, reusedResult } from '../paid/paid-batch.ts';
import type { AttemptContext } from '../paid/paid-call.ts';
import { readPart } from '../run/parts.ts';
import type { BatchResult } from '../run/types.ts';
import { linesPartIdentity } from './part-identity.ts';
import type { JobRef } from './types.ts';

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
