import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { optionsHash } from '../run/parts.ts';
import { planKey } from '../run/scheduled-layout.ts';
import { resumableFeedRun } from '../state/stopped-run.ts';
import { readWatermarkState } from '../state/watermarks.ts';
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
  return resumableFeedRun(store, request.name, feedHash(request.kind, request.filters));
}
