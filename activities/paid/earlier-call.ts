import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../../connectors/storage/store.ts';
import { batchMarkersPrefix, MAX_ANSWER_WAIT_MS, type MarkerFolder, readMarker } from '../run/unsaved-answers.ts';
import type { AttemptContext } from './paid-call.ts';

const POLL_MS = 250;

/**
 * Waits while a call of an earlier attempt of the same batch is on its way (its marker awaits its answer and its
 * request timeout has not passed) or its answer is being saved (`saving_until`), until `saved()` finds the batch's
 * part. Temporal starts another attempt when a heartbeat lapses (a worker whose loop was held, a paused worker) while
 * the first one's call may still be answered; that answer, saved as the batch's part, is then the batch's, and asking
 * again would buy it twice. Returns what `saved()` found, or undefined when no earlier call is left to wait for.
 *
 * Bounded: the earlier call's request timeout plus a grace (`readMarker`), at most `MAX_ANSWER_WAIT_MS`; a worker
 * that died during its call never settles its marker, so its batch is asked again once that has passed. The attempt's
 * own cancellation ends the wait.
 */
export async function awaitEarlierCall<T>(
  store: Store,
  folder: MarkerFolder,
  batch: number,
  attempt: AttemptContext,
  saved: () => Promise<T | undefined>,
  pollMs = POLL_MS,
): Promise<T | undefined> {
  if (attempt.attempt <= 1) return undefined;
  const latest = Date.now() + MAX_ANSWER_WAIT_MS;
  while (Date.now() < latest) {
    const onItsWay = await earlierCallOnItsWay(store, folder, batch, attempt.attempt);
    // Read after the markers: an answer saved between the two reads is found here.
    const found = await saved();
    if (found !== undefined || !onItsWay) return found;
    attempt.signal?.throwIfAborted();
    await sleep(pollMs, undefined, attempt.signal ? { signal: attempt.signal } : {});
  }
  return undefined;
}

async function earlierCallOnItsWay(store: Store, folder: MarkerFolder, batch: number, mine: number) {
  const now = Date.now();
  for await (const info of store.list(batchMarkersPrefix(folder, batch))) {
    const read = await readMarker(store, info.key, now);
    const record = 'record' in read ? read.record : undefined;
    if ((record?.attempt ?? 1) >= mine) continue;
    if ('until' in read) return true;
    const saving = record?.saving_until ? Date.parse(record.saving_until) : Number.NaN;
    if (saving > now) return true;
  }
  return false;
}
