import { randomUUID } from 'node:crypto';
import { chargedNothing, SignalApiError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { jobPrefix } from './layout.ts';
import type { JobRef } from './types.ts';

/**
 * A paid per-item call (bulk enrich, bulk verify) whose answer may be paid for and never saved: the answer was lost
 * (a 5xx or a reset after the service did the work) or the worker died before the part was written. Before each
 * call the activity leaves a marker under `work/calls/`; once the part is published the marker is removed. A marker
 * still there at the end is an answer that was not saved: with the credits the failed answer reported
 * (`x-credits-charged` on a 5xx), or with an unknown cost when nothing said (a reset, a timeout, a dead worker).
 * The manifest adds them up, so a double charge is visible instead of silent.
 */
export interface UnsavedCall {
  batch: number;
  started_at: string;
  /** Credits the failed answer said were charged; null while the outcome is unknown. */
  credits: number | null;
  reason: string;
}

export interface UnsavedTotals {
  /** Credits reported by answers that were paid for and lost. */
  credits: number;
  /** Calls whose outcome is unknown (no answer said what they cost): each may have cost up to a batch's worst case. */
  unknownCalls: number;
}

export const callsPrefix = (job: JobRef) => `${jobPrefix(job)}work/calls/`;

export class CallMarker {
  readonly key: string;
  readonly #store: Store;
  readonly #record: UnsavedCall;

  private constructor(store: Store, key: string, record: UnsavedCall) {
    this.#store = store;
    this.key = key;
    this.#record = record;
  }

  /** Leaves the marker before the call is sent. */
  static async begin(store: Store, job: JobRef, batch: number): Promise<CallMarker> {
    const key = `${callsPrefix(job)}part-${String(batch).padStart(5, '0')}-${randomUUID()}.json`;
    const record: UnsavedCall = {
      batch,
      started_at: new Date().toISOString(),
      credits: null,
      reason: 'no answer saved (the worker stopped during the call)',
    };
    await store.writeText(key, JSON.stringify(record), { contentType: 'application/json' });
    return new CallMarker(store, key, record);
  }

  /** The answer was saved: nothing was lost. (A marker that cannot be removed only over-reports.) */
  async saved(): Promise<void> {
    await this.#store.delete(this.key).catch(() => undefined);
  }

  /**
   * The call failed. A failure that provably charged nothing (a 4xx, a 429, a connection never made, an answer
   * saying 0 credits) removes the marker; any other keeps it with what the answer said it cost, if it said.
   */
  async failed(error: unknown): Promise<void> {
    // Storage trouble here must not hide the call's own error; the marker left by begin() then counts as unknown.
    if (chargedNothing(error)) {
      await this.#store.delete(this.key).catch(() => undefined);
      return;
    }
    const credits = error instanceof SignalApiError ? (error.creditsCharged ?? null) : null;
    const reason = error instanceof Error ? error.message : String(error);
    const record: UnsavedCall = { ...this.#record, credits, reason };
    await this.#store
      .writeText(this.key, JSON.stringify(record), { contentType: 'application/json' })
      .catch(() => undefined);
  }
}

/** What the markers left under the job add up to. */
export async function unsavedTotals(store: Store, job: JobRef): Promise<UnsavedTotals> {
  const totals: UnsavedTotals = { credits: 0, unknownCalls: 0 };
  for await (const info of store.list(callsPrefix(job))) {
    let record: UnsavedCall;
    try {
      record = JSON.parse(await store.readText(info.key)) as UnsavedCall;
    } catch {
      totals.unknownCalls += 1;
      continue;
    }
    if (typeof record.credits === 'number') totals.credits += record.credits;
    else totals.unknownCalls += 1;
  }
  return totals;
}
