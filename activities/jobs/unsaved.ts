import { randomBytes } from 'node:crypto';
import { chargedNothing, SignalApiError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { jobPrefix } from './layout.ts';
import type { JobRef } from './types.ts';

/**
 * A paid per-item call (bulk enrich, bulk verify) whose answer may be paid for and never saved: the answer was lost
 * (a 5xx or a reset after the service did the work), the worker died before the part was written, or another attempt
 * of the same batch (started when this one's heartbeat lapsed: a paused worker, a blocked event loop, a restarted
 * Temporal server) saved its own answer first. Before each call the activity leaves a marker under `work/calls/`,
 * named by the batch and a call id; the part it then publishes names the calls whose answers it holds
 * (`signal-kit-calls`). A marker that no part names when the job is finalized is an answer that was not saved: with
 * the credits its answer reported (a 5xx's `x-credits-charged`, a 2xx answer that lost the race to be saved or came
 * to an attempt already cancelled), or with an unknown cost when nothing said (a reset, a timeout, a dead worker).
 * The manifest adds them up, so a double charge is visible instead of silent.
 *
 * Markers are not removed by the attempt that saved its answer: another attempt may still replace the part. The
 * finalize step settles them all at once (saved ones are removed).
 */
export interface UnsavedCall {
  batch: number;
  /** The call's id, also in its marker's key and, once its answer is saved, in the part's `signal-kit-calls`. */
  call?: string;
  /** Temporal's attempt number of the activity that made the call (a later attempt runs after a heartbeat lapsed). */
  attempt?: number;
  started_at: string;
  /** Credits the answer said were charged; null while the outcome is unknown. */
  credits: number | null;
  reason: string;
}

export interface UnsavedTotals {
  /** Credits reported by answers that were paid for and lost. */
  credits: number;
  /** Calls whose outcome is unknown (no answer said what they cost): each may have cost up to a batch's worst case. */
  unknownCalls: number;
}

/** Whose markers: a job (`<job>/work/calls/`), or a folder of its own (a push run's, activities/push/layout.ts). */
export type MarkerFolder = JobRef | { callsPrefix: string };

export const callsPrefix = (owner: MarkerFolder) =>
  'callsPrefix' in owner ? owner.callsPrefix : `${jobPrefix(owner)}work/calls/`;

const MARKER_KEY = /part-(\d{5,})-([0-9a-z-]+)\.json$/;

export class CallMarker {
  readonly key: string;
  /** Named in the part's metadata once the answer is saved. */
  readonly id: string;
  readonly #store: Store;
  readonly #record: UnsavedCall;

  private constructor(store: Store, key: string, id: string, record: UnsavedCall) {
    this.#store = store;
    this.key = key;
    this.id = id;
    this.#record = record;
  }

  /** Leaves the marker before the call is sent. */
  static async begin(store: Store, job: MarkerFolder, batch: number, attempt = 1): Promise<CallMarker> {
    const id = `a${attempt}-${randomBytes(5).toString('hex')}`;
    const key = `${callsPrefix(job)}part-${String(batch).padStart(5, '0')}-${id}.json`;
    const record: UnsavedCall = {
      batch,
      call: id,
      attempt,
      started_at: new Date().toISOString(),
      credits: null,
      reason: 'no answer saved (the worker stopped during the call)',
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

  /** The call was answered (and charged `credits`), but its answer is not in the part: it is counted as lost. */
  async lost(credits: number, reason: string): Promise<void> {
    await this.#rewrite(credits, reason);
  }

  async #rewrite(credits: number | null, reason: string): Promise<void> {
    const record: UnsavedCall = { ...this.#record, credits, reason };
    await this.#store
      .writeText(this.key, JSON.stringify(record), { contentType: 'application/json' })
      .catch(() => undefined);
  }
}

/**
 * What the markers left under the job add up to. `saved` holds, per batch index, the calls its part names: their
 * markers are answers saved, removed here and not counted.
 */
export async function unsavedTotals(
  store: Store,
  job: MarkerFolder,
  saved: ReadonlyMap<number, ReadonlySet<string>> = new Map(),
): Promise<UnsavedTotals> {
  const totals: UnsavedTotals = { credits: 0, unknownCalls: 0 };
  const settled: string[] = [];
  for await (const info of store.list(callsPrefix(job))) {
    const named = MARKER_KEY.exec(info.key);
    if (named && saved.get(Number(named[1]))?.has(named[2] ?? '')) {
      settled.push(info.key);
      continue;
    }
    let record: UnsavedCall;
    try {
      record = JSON.parse(await store.readText(info.key)) as UnsavedCall;
    } catch {
      totals.unknownCalls += 1;
      continue;
    }
    if (typeof record.credits === 'number' && Number.isFinite(record.credits) && record.credits >= 0) {
      totals.credits += record.credits;
    } else totals.unknownCalls += 1;
  }
  // A marker that cannot be removed is counted again by a later finalize only if no part names it: harmless.
  for (let i = 0; i < settled.length; i += 16) {
    await Promise.all(settled.slice(i, i + 16).map((key) => store.delete(key).catch(() => undefined)));
  }
  return totals;
}
