import { Context } from '@temporalio/activity';
import { StorageError } from '../../connectors/errors.ts';
import type { CallOptions } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import {
  type EncodedTablePart,
  type PartIdentity,
  type PartRead,
  type PartStatus,
  partFingerprint,
  readPart,
  redoneIdentity,
  releaseBody,
  type StoredPart,
  withStorageRetries,
  writeEncodedPart,
  writeTableParts,
} from '../run/parts.ts';
import type { Compression, PartCounts } from '../run/types.ts';
import { CallMarker, type MarkerFolder } from '../run/unsaved-answers.ts';
import type { PartSpool } from './spool.ts';

/**
 * One paid call of a batch and the saving of its answer, so that every call the service may have charged is either
 * in the part or counted in the manifest as a lost answer (activities/run/unsaved-answers.ts), also when two attempts
 * of the same batch run at once: Temporal starts another attempt when a heartbeat lapses (a paused worker, an event
 * loop held by a huge answer, a Temporal server restarted), while the first may still be running.
 *
 * - The activity's cancellation (Temporal tells a running attempt that it timed out or was cancelled on its next
 *   heartbeat) stops the call until it is sent, also while it waits for a rate-limit permit, leaving no marker; a
 *   call already sent is read to its answer, whose credits its marker keeps, and the attempt then ends cancelled.
 * - Before the part is written, it is read again: if it changed since this attempt read it, another attempt saved
 *   the batch first, and this answer is recorded as paid and not saved (with the credits the service said) instead
 *   of replacing it. If both write within that instant, the part names whose answer it holds, and the other's
 *   marker is counted with its credits: a call's marker records what the answer cost as soon as it is answered.
 */

/** The attempt running this activity: its cancellation and its number (1 outside Temporal, as in unit tests). */
export interface AttemptContext {
  signal?: AbortSignal;
  attempt: number;
  /**
   * Asks Temporal whether this attempt still counts, and throws when it does not. A worker that resumes after a
   * stall (SIGSTOP, a frozen VM) may find attempts the server handed it meanwhile and has already given up on (their
   * heartbeat lapsed before the worker read them); their calls would be paid for and never saved.
   */
  stillCurrent?: () => Promise<void>;
  /** Where parts the output refused are kept until a re-run publishes them (activities/paid/spool.ts). */
  spool?: PartSpool;
  /** The API client's per-call timeout, kept in the call's marker: how long finalize may wait for its answer. */
  requestTimeoutMs?: number;
}

export function currentAttempt(): AttemptContext {
  try {
    const context = Context.current();
    return {
      signal: context.cancellationSignal,
      attempt: context.info.attempt,
      stillCurrent: () => confirmAttempt(context),
    };
  } catch {
    return { attempt: 1 };
  }
}

/** How long the check waits for Temporal: past that (a server restarting), the call goes on as it would without it. */
const CONFIRM_TIMEOUT_MS = 2_000;

/** A heartbeat answered by the server: refused for an attempt it timed out or cancelled, whatever the worker knows. */
async function confirmAttempt(context: Context): Promise<void> {
  let beat: Promise<void>;
  try {
    beat = context.client.activity.heartbeat(context.info.taskToken);
  } catch {
    return; // no client in this worker: the cancellation signal alone decides
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    beat.then(
      () => undefined,
      (error: unknown) => error,
    ),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), CONFIRM_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  const name = outcome instanceof Error ? outcome.name : undefined;
  if (name === 'ActivityNotFoundError' || name === 'ActivityCancelledError') {
    throw new Error(
      `attempt ${context.info.attempt} of this activity no longer counts (Temporal timed it out or cancelled it): ` +
        'its call is left to the attempt that does',
    );
  }
}

export interface PaidCallOptions {
  /**
   * An answer read after the attempt was cancelled is returned (with `cancelled` and its reason) instead of thrown away:
   * the caller saves it as the batch's part, so the attempt that replaced this one takes it instead of buying it again
   * (it waits for this call: `earlier-call.ts`).
   */
  keepCancelledAnswer?: boolean;
}

/**
 * Sends one paid call under a marker. The call is not retried by the client (the activity's own retry does it, after
 * the marker says what happened). The attempt's cancellation stops it until it is sent (the permit wait included);
 * once sent, the service may have charged it, so a cancelled attempt still reads the answer (within the client's
 * request timeout), keeps its marker with the credits the answer reported, and only then ends as cancelled: a call
 * of unknown cost is left only by a network failure or a timeout.
 */
export async function sendPaidCall<T extends { credits: number; creditsRemaining?: number | undefined }>(
  store: Store,
  job: MarkerFolder,
  index: number,
  attempt: AttemptContext,
  send: (call: CallOptions) => Promise<T>,
  options: PaidCallOptions = {},
): Promise<{ response: T; marker: CallMarker; cancelled?: { reason: unknown } }> {
  attempt.signal?.throwIfAborted();
  await attempt.stillCurrent?.();
  // The marker is left once the call has its slot, right before it is sent: a worker that dies while it waits for
  // the rate limiter leaves no marker for a call the service never saw.
  let marker: CallMarker | undefined;
  const cancelled = attempt.signal;
  // The attempt's cancellation reaches the call only until it is sent: an answer on its way is read to its end.
  const untilSent = new AbortController();
  const follow = () => untilSent.abort(cancelled?.reason);
  if (cancelled?.aborted) follow();
  else cancelled?.addEventListener('abort', follow, { once: true });
  let sent = false;
  const call: CallOptions = {
    retry: false,
    signal: untilSent.signal,
    beforeSend: async () => {
      marker ??= await CallMarker.begin(store, job, index, attempt.attempt, attempt.requestTimeoutMs);
    },
    onSend: () => {
      sent = true;
      cancelled?.removeEventListener('abort', follow);
    },
  };
  let response: T;
  try {
    response = await send(call);
  } catch (error) {
    await marker?.failed(error, sent);
    throw error;
  } finally {
    cancelled?.removeEventListener('abort', follow);
  }
  if (!marker) throw new Error('sendPaidCall: the call was answered without its beforeSend hook (no marker left)');
  if (cancelled?.aborted && options.keepCancelledAnswer) {
    // The caller saves the answer (unless another attempt saved the batch first), then ends cancelled.
    await marker.answered(response.credits, response.creditsRemaining);
    return { response, marker, cancelled: { reason: cancelled.reason } };
  }
  if (cancelled?.aborted) {
    await marker.lost(
      response.credits,
      'answered after this attempt was cancelled (another attempt does the batch)',
      response.creditsRemaining,
    );
    throw cancelled.reason;
  }
  // What it cost is known now: counted unless a part names the call, also if two attempts' parts are written at once.
  await marker.answered(response.credits, response.creditsRemaining);
  return { response, marker };
}

export type Published = { lost: false; part: StoredPart } | { lost: true; part: StoredPart | undefined };

/** A paid call's answer that a part is to hold: the call's marker and the credits the service said it charged. */
export interface PaidAnswer {
  marker: CallMarker;
  credits: number;
}

/** Records every answer of `paid` as paid for and not saved, for `reason`. */
async function lostAll(paid: readonly PaidAnswer[], reason: string): Promise<void> {
  for (const answer of paid) await answer.marker.lost(answer.credits, reason);
}

/**
 * Publishes the part holding paid answers (a bulk call's one, a single batch's several), unless another attempt
 * replaced the part since `seen` was read (whatever was there, trusted or not: its fingerprint). `write` receives the
 * calls the new part holds (those of the trusted part seen, whose lines it keeps, and these).
 */
export async function publishPaidPart(
  store: Store,
  key: string,
  seen: PartRead,
  identity: PartIdentity,
  paid: readonly PaidAnswer[],
  write: (calls: string[], target: Store) => Promise<StoredPart>,
  spool?: PartSpool,
): Promise<Published> {
  const calls = [...(seen.part?.calls ?? []), ...paid.map((answer) => answer.marker.id)];
  try {
    if ((await withStorageRetries(() => partFingerprint(store, key))) !== seen.fingerprint) {
      await lostAll(paid, 'answered, but another attempt of the batch saved its part first');
      return { lost: true, part: (await readPart(store, key, identity)).part };
    }
    return { lost: false, part: await write(calls, store) };
  } catch (error) {
    await lostAll(paid, `answered, but the part could not be written: ${String(error)}`);
    // Refused for good (a full disk, access denied): what the write would have published goes to the worker's spool,
    // and a re-run publishes it from there instead of paying again (the part names these calls: their markers settle).
    if (paid.length > 0 && spool && error instanceof StorageError && !error.retryable) {
      await write(calls, spool.keepOnly(store, { key, fingerprint: seen.fingerprint })).catch(() => undefined);
    }
    throw error;
  }
}

/** A batch's lines part as it is to be published: encoded, with its flat tables, counts and status. */
export interface EncodedLinesPart {
  compression: Compression | undefined;
  body: Buffer;
  tables: EncodedTablePart[];
  counts: PartCounts;
  status: PartStatus;
}

/** `publishPaidPart` for a lines part and its flat tables: the tables first, as the lines part marks the batch done. */
export function publishPaidLines(
  store: Store,
  key: string,
  seen: PartRead,
  identity: PartIdentity,
  paid: readonly PaidAnswer[],
  part: EncodedLinesPart,
  spool?: PartSpool,
): Promise<Published> {
  const writeAs = redoneIdentity(identity, seen);
  return publishPaidPart(
    store,
    key,
    seen,
    identity,
    paid,
    async (calls, target) => {
      // The tables' bytes are kept until the lines part is written: refused, the whole write goes to the spool.
      await writeTableParts(target, part.tables, part.status, writeAs, { keepBodies: true });
      const stored = await writeEncodedPart(
        target,
        part.compression,
        key,
        part.body,
        part.counts,
        part.status,
        calls,
        writeAs,
      );
      for (const table of part.tables) releaseBody(table.body);
      return stored;
    },
    spool,
  );
}

/** What a losing attempt reports: the winner's part when it is complete, else a retry to carry on from it. */
export function lostRace(key: string, store: Store, part: StoredPart | undefined): StoredPart {
  if (part && !part.failed && !part.partial) return part;
  throw new StorageError('another attempt of this batch changed its part meanwhile; trying again from it', {
    url: store.url,
    key,
  });
}
