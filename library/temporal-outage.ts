import { setTimeout as delay } from 'node:timers/promises';
import { isGrpcServiceError, type WorkflowHandle } from '@temporalio/client';
import { TemporalOutageError } from '../connectors/errors.ts';

/**
 * How long a follower of a job (`--wait`, `status`, `schedule run --wait`) keeps retrying while Temporal does not
 * answer. A job is durable: it goes on once the server is back, so a restart or a short outage must not end the
 * command; past this much continuous outage the command gives up with exit 2.
 */
export const TEMPORAL_OUTAGE_LIMIT_MS = 120_000;

/** The backoff between tries while Temporal is down: from the first, doubled up to the last. */
const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 5_000;

/** gRPC's UNAVAILABLE (14) and DEADLINE_EXCEEDED (4): the server is down or did not answer in time. */
const OUTAGE_CODES: ReadonlySet<number> = new Set([14, 4]);

/** Whether the error (or one of its causes) says the server could not be reached, not that it refused the call. */
export function isTemporalOutage(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && OUTAGE_CODES.has(e.code)) return true;
  }
  return false;
}

/** Told once per outage, when the first call fails to reach the server. */
export type OutageNotice = (message: string) => void;

export const printOutageNotice: OutageNotice = (message) => console.error(`signal-kit: ${message}`);

/**
 * Runs a call to Temporal, retrying it with backoff while the server is unreachable, for up to
 * `TEMPORAL_OUTAGE_LIMIT_MS` of continuous outage; then throws a `TemporalOutageError`. Any other failure is thrown
 * as it is. `back` is the quick call that tells the server answers again (a long poll cannot).
 */
export async function throughOutage<T>(
  workflowId: string,
  call: () => Promise<T>,
  options: { notice?: OutageNotice; back?: () => Promise<unknown>; limitMs?: number } = {},
): Promise<T> {
  const limitMs = options.limitMs ?? TEMPORAL_OUTAGE_LIMIT_MS;
  const notice = options.notice ?? printOutageNotice;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!isTemporalOutage(error)) throw error;
      notice(`Temporal is unreachable; retrying for up to ${Math.round(limitMs / 1000)} s while ${workflowId} goes on`);
      await awaitServer(workflowId, options.back ?? call, limitMs, error);
    }
  }
}

/** Waits with backoff until `probe` reaches the server again, or throws once the outage has lasted `limitMs`. */
async function awaitServer(
  workflowId: string,
  probe: () => Promise<unknown>,
  limitMs: number,
  first: unknown,
): Promise<void> {
  const since = Date.now();
  let last = first;
  for (let wait = FIRST_RETRY_MS; Date.now() - since < limitMs; wait = Math.min(wait * 2, LAST_RETRY_MS)) {
    await delay(Math.min(wait, Math.max(0, limitMs - (Date.now() - since))));
    try {
      await probe();
      return;
    } catch (error) {
      if (!isTemporalOutage(error)) return; // the server answered (with a refusal): the call itself says what
      last = error;
    }
  }
  throw new TemporalOutageError(workflowId, Date.now() - since, last);
}

/** A workflow's result, followed across Temporal outages (see `throughOutage`). */
export function resultThroughOutage<H extends WorkflowHandle, T = Awaited<ReturnType<H['result']>>>(
  handle: H,
  notice?: OutageNotice,
): Promise<T> {
  return throughOutage(handle.workflowId, () => handle.result() as Promise<T>, {
    back: () => handle.describe(),
    ...(notice ? { notice } : {}),
  });
}
