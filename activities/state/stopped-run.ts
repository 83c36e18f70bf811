import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { stoppedFeedRunKey, syncOpenRunKey } from './layout.ts';
import { readCheckedPointer } from './sync-state.ts';
import { readWatermarkState } from './watermarks.ts';

/**
 * What a run that stopped before its commit left for the next run of its schedule, so that the answers it paid for
 * are used and never bought again:
 * - a feed run an output stopped (finalized `failed`) is recorded in `<name>/work/_stopped.json` until a run of the
 *   feed commits; the next run resumes it under its own id while the feed and the state it started from are unchanged;
 * - a sync night names itself in `<name>/_open-run.json` when it plans; the next night finds there one that never
 *   committed and takes its saved answers into the state first (`sync/carry-on.ts`).
 */

const JSON_TYPE = { contentType: 'application/json' };

/** What `finalizeFeedRun` records of a run that stopped. */
export interface StoppedFeedRun {
  run_id: string;
  scheduled_at: string;
  /** The state the run started from: it is resumed only while no run has committed since. */
  state_from: string | null;
  /** A hash of the feed's kind and filters: a feed changed since asks its own questions. */
  feed: string;
}

export async function recordStoppedFeedRun(store: Store, name: string, stopped: StoppedFeedRun): Promise<void> {
  await store.writeText(stoppedFeedRunKey(name), JSON.stringify(stopped), JSON_TYPE);
}

/** Forgets the stopped run (a run of the feed finished: this one, or the stopped one it resumed). */
export async function clearStoppedFeedRun(store: Store, name: string): Promise<void> {
  if (await store.exists(stoppedFeedRunKey(name))) await store.delete(stoppedFeedRunKey(name));
}

/**
 * The scheduled time of the feed's stopped run when the feed (`feed`, its hash) is the same and no run committed
 * since it started; null otherwise (and for a record that does not read).
 */
export async function resumableFeedRun(store: Store, name: string, feed: string): Promise<string | null> {
  const stopped = await readJsonIfPresent<StoppedFeedRun>(store, stoppedFeedRunKey(name)).catch(() => undefined);
  if (!stopped || typeof stopped.scheduled_at !== 'string') return null;
  if (stopped.feed !== feed) return null;
  const state = await readWatermarkState(store, name);
  return state.runId === stopped.state_from ? stopped.scheduled_at : null;
}

/** Names `runId` as the night that planned last. */
export async function markSyncRunOpen(store: Store, name: string, runId: string): Promise<void> {
  await store.writeText(syncOpenRunKey(name), JSON.stringify({ run_id: runId }), JSON_TYPE);
}

/**
 * The night before `runId` that planned and never committed (its id), or undefined: none, this very night, one the
 * committed state already covers, or a pointer that is not the schedule's own (it says nothing of which run
 * committed, so the night starts afresh).
 */
export async function uncommittedSyncRun(store: Store, name: string, runId: string): Promise<string | undefined> {
  const open = await readJsonIfPresent<{ run_id: string }>(store, syncOpenRunKey(name));
  if (!open || open.run_id === runId) return undefined;
  const found = await readCheckedPointer(store, name);
  if (found && 'problem' in found) return undefined;
  const pointer = found?.pointer;
  if (pointer?.run_id === open.run_id || (pointer && pointer.run_id > open.run_id)) return undefined;
  return open.run_id;
}
