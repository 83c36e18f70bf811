import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { optionsHash } from '../run/parts.ts';
import { planKey } from '../run/scheduled-layout.ts';
import { readWatermarkState } from '../run/watermarks.ts';
import type { FeedFilters, FeedPlan, FeedRunRef } from './types.ts';

/** Where a feed's first run starts when it is given no `since`: a week before it. */
export const FIRST_RUN_LOOKBACK_MS = 7 * 86_400_000;

export interface PrepareFeedRequest {
  run: FeedRunRef;
  scheduledAt: string;
  /** ISO 8601: where the first run starts (default: a week before it). */
  since?: string;
}

/**
 * Fixes a run's lower time bound once (`work/run-<id>/_plan.json`), so that a retried or continued run asks the
 * same questions: the newest signal any earlier run delivered (every match after it is new), or `since` for the
 * first run. Buyer intent has no time bound: its plan only records where the state stood.
 */
export async function prepareFeedRun(store: Store, request: PrepareFeedRequest): Promise<FeedPlan> {
  const { run } = request;
  const saved = await readJsonIfPresent<FeedPlan>(store, planKey(run));
  if (saved) return saved;
  const state = await readWatermarkState(store, run.name);
  let newest: string | null = null;
  for (const at of state.marks.values()) if (newest === null || at > newest) newest = at;
  const firstStart = request.since ?? new Date(Date.parse(request.scheduledAt) - FIRST_RUN_LOOKBACK_MS).toISOString();
  const plan: FeedPlan = {
    detected_after: run.kind === 'intent-contacts' ? null : (newest ?? firstStart),
    state_from: state.runId,
    known: state.marks.size,
  };
  await store.writeText(planKey(run), JSON.stringify(plan), { contentType: 'application/json' });
  return plan;
}

/** `<name>/work/_stopped.json`: the run an output stopped (finalized `failed`), until a run of the feed commits. */
export const stoppedRunKey = (name: string) => `${name}/work/_stopped.json`;

/** What `finalizeFeedRun` records of a run that stopped. */
export interface StoppedFeedRun {
  run_id: string;
  scheduled_at: string;
  /** The state the run started from: it is resumed only while no run has committed since. */
  state_from: string | null;
  /** A hash of the feed's kind and filters: a feed changed since asks its own questions. */
  feed: string;
}

export const feedHash = (kind: FeedKind, filters: FeedFilters) => optionsHash({ kind, filters });

export interface StoppedRunRequest {
  name: string;
  output: string;
  kind: FeedKind;
  filters: FeedFilters;
}

/**
 * The scheduled time of the feed's last run when an output stopped it and nothing was committed since (the same
 * feed, the state where it started): the next run finishes it under its own id instead of starting one, so that the
 * answers it paid for (saved, or kept in the worker's spool) are used and the questions it never asked are asked.
 * Null otherwise.
 */
export async function stoppedFeedRun(store: Store, request: StoppedRunRequest): Promise<string | null> {
  const stopped = await readJsonIfPresent<StoppedFeedRun>(store, stoppedRunKey(request.name)).catch(() => undefined);
  if (!stopped || typeof stopped.scheduled_at !== 'string') return null;
  if (stopped.feed !== feedHash(request.kind, request.filters)) return null;
  const state = await readWatermarkState(store, request.name);
  return state.runId === stopped.state_from ? stopped.scheduled_at : null;
}
