import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { chargedNothing, ObjectNotFoundError, SignalApiError } from '../../connectors/errors.ts';
import { DEFAULT_TIMEOUT_MS } from '../../connectors/signal-api/index.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type BalanceSeen, reconcileFromBalances } from './balance-reconcile.ts';

/**
 * Lost answers: paid per-item calls (bulk enrich, bulk verify, single enrich) whose answer may have been paid for and
 * never saved: the answer was lost (a 5xx or a reset after the service did the work), the worker died before the part
 * was written, or another attempt of the same batch (started when this one's heartbeat lapsed: a paused worker, a
 * blocked event loop, a restarted Temporal server) saved its own answer first. Before each call the activity leaves a
 * marker under `work/calls/`, named by the batch and a call id; the part it then publishes names the calls whose
 * answers it holds (`signal-kit-calls`). A marker that no part names when the job is finalized is a lost answer: with
 * the credits its answer reported (a 5xx's `x-credits-charged`, a 2xx answer that lost the race to be saved or came
 * to an attempt already cancelled), or with an unknown cost when nothing said (a reset, a timeout, a dead worker).
 * The manifest adds them up (`unsaved_answers`), so a double charge is visible instead of silent.
 *
 * Markers are not removed by the attempt that saved its answer: another attempt may still replace the part. The
 * finalize step settles them all at once (saved ones are removed).
 */
export interface CallMarkerRecord {
  batch: number;
  /** The call's id, also in its marker's key and, once its answer is saved, in the part's `signal-kit-calls`. */
  call?: string;
  /** Temporal's attempt number of the activity that made the call (a later attempt runs after a heartbeat lapsed). */
  attempt?: number;
  started_at: string;
  /** Credits the answer said were charged; null while the outcome is unknown. */
  credits: number | null;
  reason: string;
  /**
   * True from the marker's start until the attempt writes what became of the call (its answer's credits as soon as
   * it is answered, or its failure): while it is, the call may still be answered (within `timeout_ms`), so finalize
   * waits for it. Markers written before this field existed lack it.
   */
  awaiting_answer?: boolean;
  /** The client's per-call timeout: no answer comes later than that after the call left. */
  timeout_ms?: number;
  /** The account's balance the answer reported (`x-credits-remaining`), right after this call's charge. */
  balance_after?: number;
  /** When the answer was read. */
  answered_at?: string;
  /**
   * Answered, its attempt saving the answer as the batch's part until about then: another attempt of the batch waits
   * for that part instead of buying the answer again (activities/paid/earlier-call.ts).
   */
  saving_until?: string;
}

export interface UnsavedAnswers {
  /** Credits reported by answers that were paid for and lost, and those reconciled from balances (`fromBalances`). */
  credits: number;
  /** Calls whose outcome is unknown (no answer said what they cost): each may have cost up to a batch's worst case. */
  unknownCalls: number;
  /**
   * Calls whose answer nobody read (a worker killed after the service answered), their cost reconciled from the
   * balances the run's answers reported (`reconcileFromBalances`): exact when nothing else charged the account
   * between the run's first and last answered call, at most this otherwise.
   */
  fromBalances?: { calls: number; credits: number };
}

/** Whose markers: a job (`<job>/work/calls/`), or a folder of its own (a scheduled run's, activities/run/scheduled-layout.ts). */
export type MarkerFolder = { jobId: string } | { callsPrefix: string };

export const callsPrefix = (owner: MarkerFolder) =>
  'callsPrefix' in owner ? owner.callsPrefix : `${owner.jobId}/work/calls/`;

const MARKER_KEY = /part-(\d{5,})-([0-9a-z-]+)\.json$/;

/** Where the markers of one batch's calls are: `<calls>/part-<batch>-<call id>.json`. */
export const batchMarkersPrefix = (owner: MarkerFolder, batch: number) =>
  `${callsPrefix(owner)}part-${String(batch).padStart(5, '0')}-`;

/**
 * Past its call's timeout, how much longer a marker awaiting its answer is waited for: the wait for a rate-limit
 * permit before the call left, the parse of the answer and the write of the marker.
 */
export const ANSWER_GRACE_MS = 5_000;
/** The longest finalize waits for any one answer, whatever timeout the client was given: it never hangs a job. */
export const MAX_ANSWER_WAIT_MS = 120_000;
/** How long an answered call's attempt is given to save its part (`saving_until`): a part's write, retried. */
export const ANSWER_SAVING_MS = 15_000;
const SETTLE_POLL_MS = 250;

export class CallMarker {
  readonly key: string;
  /** Named in the part's metadata once the answer is saved. */
  readonly id: string;
  readonly #store: Store;
  readonly #record: CallMarkerRecord;
  /** What the answer said of the balance, kept through later rewrites (`lost` after `answered`). */
  #answered: Pick<CallMarkerRecord, 'balance_after' | 'answered_at'> = {};

  private constructor(store: Store, key: string, id: string, record: CallMarkerRecord) {
    this.#store = store;
    this.key = key;
    this.id = id;
    this.#record = record;
  }

  /** Leaves the marker before the call is sent; `timeoutMs` is the client's per-call timeout. */
  static async begin(
    store: Store,
    job: MarkerFolder,
    batch: number,
    attempt = 1,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): Promise<CallMarker> {
    const id = `a${attempt}-${randomBytes(5).toString('hex')}`;
    const key = `${batchMarkersPrefix(job, batch)}${id}.json`;
    const record: CallMarkerRecord = {
      batch,
      call: id,
      attempt,
      started_at: new Date().toISOString(),
      credits: null,
      reason: 'no answer saved (the worker stopped during the call)',
      awaiting_answer: true,
      timeout_ms: timeoutMs,
    };
    await store.writeText(key, JSON.stringify(record), { contentType: 'application/json' });
    return new CallMarker(store, key, id, record);
  }

  /**
   * The call failed. A failure that provably charged nothing (a 4xx, a 429, a connection never made, an answer
   * saying 0 credits, a call cancelled before it was sent) removes the marker; any other keeps it with what the
   * answer said it cost, if it said.
   */
  async failed(error: unknown, sent = true): Promise<void> {
    // Storage trouble here must not hide the call's own error; the marker left by begin() then counts as unknown.
    if (!sent || chargedNothing(error)) {
      await this.#store.delete(this.key).catch(() => undefined);
      return;
    }
    const credits = error instanceof SignalApiError ? (error.creditsCharged ?? null) : null;
    await this.#rewrite(credits, error instanceof Error ? error.message : String(error));
  }

  /**
   * The call was answered and charged `credits`: from now on the marker says what the call cost, whatever becomes of
   * the answer. Saved, a part names the call and finalize removes the marker uncounted; not saved (another attempt's
   * part replaced this one's in the same instant, the attempt stopped before writing it), it counts these credits.
   */
  async answered(credits: number, balance?: number): Promise<void> {
    const saving = new Date(Date.now() + ANSWER_SAVING_MS).toISOString();
    await this.#rewrite(credits, 'answered; a lost answer unless a part names this call', balance, saving);
  }

  /** The call was answered (and charged `credits`), but its answer is not in the part: it is counted as lost. */
  async lost(credits: number, reason: string, balance?: number): Promise<void> {
    await this.#rewrite(credits, reason, balance);
  }

  async #rewrite(credits: number | null, reason: string, balance?: number, savingUntil?: string): Promise<void> {
    if (credits !== null && balance !== undefined && Number.isFinite(balance)) {
      this.#answered = { balance_after: balance, answered_at: new Date().toISOString() };
    }
    const saving = savingUntil ? { saving_until: savingUntil } : {};
    const record: CallMarkerRecord = {
      ...this.#record,
      ...this.#answered,
      credits,
      reason,
      awaiting_answer: false,
      ...saving,
    };
    const held = heldKey(this.#store, this.key);
    try {
      await this.#store.writeText(this.key, JSON.stringify(record), { contentType: 'application/json' });
      unwrittenMarkers.delete(held);
    } catch {
      // A full disk refuses the marker as it refused the answer: this process's finalize still counts what it cost.
      unwrittenMarkers.set(held, record);
    }
  }
}

/**
 * What became of calls whose marker the output refused to rewrite (a full disk, a quota): read by a finalize in this
 * process instead of the marker's stale record (still awaiting its answer, which would count as of unknown cost).
 */
const unwrittenMarkers = new Map<string, CallMarkerRecord>();
const heldKey = (store: Store, key: string) => `${store.url}\n${key}`;

/** How finalize waits for answers still on their way (see `countUnsavedAnswers`). */
export interface AnswerWait {
  /** Finalize's own cancellation: the wait ends and what has not settled counts as unknown. */
  signal?: AbortSignal;
  /** Called on every round of the wait (an activity heartbeats). */
  onWait?: () => void;
  /** The clock (tests). */
  now?: () => number;
  pollMs?: number;
}

export type Read =
  | { settled: 'credits'; credits: number; record?: CallMarkerRecord }
  | { settled: 'unknown'; record?: CallMarkerRecord }
  | { settled: 'gone' }
  | { until: number; record?: CallMarkerRecord };

/**
 * What the markers left under the job add up to. `saved` holds, per batch index, the calls its part names: their
 * markers are answers saved, removed here and not counted.
 *
 * A marker still awaiting its answer is waited for while its call may still be answered (its timeout after it
 * started, plus `ANSWER_GRACE_MS`; at most `MAX_ANSWER_WAIT_MS` from now): an attempt Temporal timed out while its
 * call was on its way (a stalled worker, a Temporal outage) reads the answer after the job's last batch and writes the
 * credits it was charged into its marker, or removes the marker when the call charged nothing. Only past that is it
 * counted as unknown: a worker that died during its call never settles its marker, so a job one of whose workers
 * crashed finalizes up to the client's timeout later.
 */
export async function countUnsavedAnswers(
  store: Store,
  job: MarkerFolder,
  saved: ReadonlyMap<number, ReadonlySet<string>> = new Map(),
  wait: AnswerWait = {},
): Promise<UnsavedAnswers> {
  const now = wait.now ?? Date.now;
  const latest = now() + MAX_ANSWER_WAIT_MS;
  const totals: UnsavedAnswers = { credits: 0, unknownCalls: 0 };
  const settled: string[] = [];
  const awaited = new Map<string, number>();
  const seen: BalanceSeen = { answered: [], unknown: [] };
  const add = (key: string, read: Read) => {
    if ('until' in read) awaited.set(key, Math.min(read.until, latest));
    else if (read.settled === 'credits') {
      totals.credits += read.credits;
      if (read.record) seen.answered.push(read.record);
    } else if (read.settled === 'unknown') {
      totals.unknownCalls += 1;
      seen.unknown.push(read.record);
    }
  };
  for await (const info of store.list(callsPrefix(job))) {
    const named = MARKER_KEY.exec(info.key);
    if (named && saved.get(Number(named[1]))?.has(named[2] ?? '')) settled.push(info.key);
    else add(info.key, await readMarker(store, info.key, now()));
  }
  while (awaited.size > 0) {
    wait.onWait?.();
    if (wait.signal?.aborted) break;
    await sleep(wait.pollMs ?? SETTLE_POLL_MS, undefined, { signal: wait.signal }).catch(() => undefined);
    for (const [key, until] of [...awaited]) {
      const read = await readMarker(store, key, now());
      if ('until' in read && now() < until) continue;
      awaited.delete(key);
      add(key, 'until' in read ? { settled: 'unknown', ...(read.record ? { record: read.record } : {}) } : read);
    }
  }
  totals.unknownCalls += awaited.size;
  for (let i = 0; i < awaited.size; i++) seen.unknown.push(undefined);
  // Calls nobody read the answer of: their cost from the balances the run's answers reported (saved ones included).
  if (totals.unknownCalls > 0) {
    for (const key of settled) {
      const read = await readMarker(store, key, now());
      if ('record' in read && read.record && read.record.credits !== null) seen.answered.push(read.record);
    }
    const reconciled = reconcileFromBalances(seen);
    if (reconciled) {
      totals.credits += reconciled.credits;
      totals.unknownCalls -= reconciled.calls;
      totals.fromBalances = reconciled;
    }
  }
  // A marker that cannot be removed is counted again by a later finalize only if no part names it: harmless.
  for (let i = 0; i < settled.length; i += 16) {
    await Promise.all(
      settled.slice(i, i + 16).map((key) => {
        unwrittenMarkers.delete(heldKey(store, key));
        return store.delete(key).catch(() => undefined);
      }),
    );
  }
  return totals;
}

/** One marker as finalize sees it at `at`: settled (with credits, unknown, or removed) or awaited until a time. */
export async function readMarker(store: Store, key: string, at: number): Promise<Read> {
  let record: CallMarkerRecord;
  try {
    record = unwrittenMarkers.get(heldKey(store, key)) ?? (JSON.parse(await store.readText(key)) as CallMarkerRecord);
  } catch (error) {
    // Removed meanwhile: the attempt found that its call charged nothing.
    return error instanceof ObjectNotFoundError ? { settled: 'gone' } : { settled: 'unknown' };
  }
  if (typeof record.credits === 'number' && Number.isFinite(record.credits) && record.credits >= 0) {
    return { settled: 'credits', credits: record.credits, record };
  }
  if (record.awaiting_answer === true) {
    const timeout = typeof record.timeout_ms === 'number' && record.timeout_ms > 0 ? record.timeout_ms : undefined;
    const until = Date.parse(record.started_at) + (timeout ?? DEFAULT_TIMEOUT_MS) + ANSWER_GRACE_MS;
    if (Number.isFinite(until) && until > at) return { until, record };
  }
  return { settled: 'unknown', record };
}

/**
 * Inside an activity: its cancellation ends the wait for lost answers, and each round of it heartbeats (the worker's
 * interceptor does too, but a finalize called by a worker without it must not look dead while it waits).
 */
export function answerWait(): AnswerWait {
  try {
    const context = Context.current();
    return { signal: context.cancellationSignal, onWait: () => context.heartbeat() };
  } catch {
    return {};
  }
}
