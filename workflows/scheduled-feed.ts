import { ApplicationFailure, defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { continueAsNew, defineQuery, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type {
  FeedCallResult,
  FeedFilters,
  FeedResult,
  FeedRunRef,
  FeedSlice,
  IncompleteSlice,
  IntentFilters,
  SearchFilters,
} from '../activities/feeds/types.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import type { FeedKind } from '../contract/kinds.ts';
import { isFatalFailure } from './activity-options.ts';
import { failureMessage } from './batch-runner.ts';
import { DEFAULT_TASK_QUEUE } from './constants.ts';
import { SEARCH_CAP, splitSlice } from './feed-slices.ts';
import { runIdOf } from './push-ids.ts';
import { type AlertFacts, withRunAlert } from './run-alert.ts';
import type { JobActivityProxy, ScheduledRunState } from './run-state.ts';
import { runScheduled, type ScheduledRunSteps } from './scheduled-run.ts';

/** The target of a feed schedule: one run that delivers the search or intent results new since the last run. */
export interface ScheduledFeedInput {
  /** The feed's name: `<output>/<name>/` holds its state, lines and manifests. */
  name: string;
  kind: FeedKind;
  output: string;
  /** Search filters (company or contact search), or the buyer-intent request. */
  filters: FeedFilters;
  /** ISO 8601: where the first run of a search feed starts (default: a week before it). */
  since?: string;
  /** No call is started that could take this run's credits over this; the rest is named incomplete. */
  maxCredits?: number;
  /** Calls in flight at once (default 4). */
  concurrency?: number;
  compression?: 'gzip' | 'none';
  /** Formats of the flat table (`companies` or `contacts`) written beside each part (`--format`); none when absent. */
  formats?: OutputFormat[];
  /** Buyer intent: contacts per page (default 1000). */
  pageSize?: number;
  /** The most calls (slices or pages) one run makes (default 1000); beyond them the rest is named incomplete. */
  maxCalls?: number;
  taskQueue?: string;
  apiTaskQueue?: string;
  /** The run's time when it is not started by a schedule (default: when the workflow chain started). */
  runAt?: string;
  /** Where an alert goes when a run fails, stops on its budget or ends with failed calls (`--notify`). */
  notify?: string;
  /** Carried across continue-as-new; not for callers. */
  carried?: FeedCarried;
}

export interface FeedCarried {
  scheduledAt: string;
  startedAt: string;
  detectedAfter: string | null;
  /** Search: slices still to ask. Intent: the cursor of the next page (null: the first; absent: done). */
  queue: FeedSlice[];
  cursor?: string | null;
  next: number;
  credits: number;
  incomplete: IncompleteSlice[];
}

export interface FeedProgress {
  name: string;
  kind: FeedKind;
  runId: string;
  status: 'planning' | 'running' | 'finalizing';
  calls: number;
  returned: number;
  credits: number;
}

export const feedProgressQuery = defineQuery<FeedProgress>('progress');

/**
 * Runs started before a fatal failure (an output that refuses writes for good) finalized the run as `failed` replay
 * without that step: they failed at once, with no manifest.
 */
export const FEED_FINALIZE_FAILED_PATCH = 'feed-finalize-failed-run';

/** Runs started before a run resumed the feed's stopped run (activities/feeds/plan.ts `stoppedFeedRun`) replay without. */
export const FEED_RESUME_STOPPED_PATCH = 'feed-resume-stopped-run';

const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** Calls one workflow run makes before it continues as new (history stays a few thousand events). */
const CALLS_PER_RUN = 300;
const DEFAULT_MAX_CALLS = 1000;
const DEFAULT_PAGE_SIZE = 1000;

/**
 * One run of a scheduled feed. A search feed asks its search with the run's lower time bound (the newest signal
 * delivered so far); an answer that is full (100, the most the service returns) is split by the filters the spec
 * allows (workflows/feed-slices.ts) until each slice fits, and a slice that cannot be split is named incomplete. A
 * buyer-intent feed pages through `next_cursor` to the last page. Then `finalizeFeedRun` writes only the companies or
 * contacts not delivered before, the manifest, and the new state, under `<output>/<name>/<dir>/dt=<date>/run-<id>/`.
 */
export function scheduledFeed(input: ScheduledFeedInput): Promise<FeedResult> {
  if (!input.notify) return runScheduled(input, feedSteps);
  const runId = runIdOf(input.carried?.scheduledAt ?? scheduledTime(input));
  const target = {
    url: input.notify,
    schedule: input.name,
    kind: input.kind,
    taskQueue: input.taskQueue ?? DEFAULT_TASK_QUEUE,
  };
  return withRunAlert(target, runId, () => runScheduled(input, feedSteps), feedAlertFacts);
}

/**
 * What a feed run's alert says of it: its counts, credits and manifest. A run left incomplete by `--max-credits`
 * alerts as stopped on its budget, one whose calls failed as ending with errors; slices the search caps or the run's
 * most calls leave are the feed's normal ending, not an alert.
 */
function feedAlertFacts(result: FeedResult): AlertFacts {
  const { new: delivered, returned, incomplete, incompleteBy = {} } = result;
  const status =
    result.status !== 'completed_with_errors'
      ? result.status
      : incompleteBy.budget
        ? 'budget_exhausted'
        : incompleteBy.failed
          ? 'completed_with_errors'
          : 'completed';
  return {
    status,
    runId: result.runId,
    counts: { new: delivered, returned, incomplete, incompleteBy },
    credits: result.credits,
    files: { manifest: result.manifestUrl },
  };
}

/** One run of a feed, up to its continue-as-new: what its steps share. */
interface FeedRun extends ScheduledRunState<ScheduledFeedInput, FeedRunRef> {
  /** The feed's lower time bound (planned by the chain's first run). */
  detectedAfter: string | null;
  readonly maxCalls: number;
  readonly incomplete: IncompleteSlice[];
  phase: FeedProgress['status'];
  /** Calls made (search: slices numbered) so far, across the runs of the chain. */
  next: number;
  credits: number;
  returned: number;
  /** The first call's failure, for the manifest. */
  error: string | undefined;
  /** A failure no retry cures: the run asks nothing more and is finalized as `failed`. */
  fatal: string | undefined;
}

/** A feed run's own steps in the scheduled run's skeleton (workflows/scheduled-run.ts). */
const feedSteps: ScheduledRunSteps<ScheduledFeedInput, FeedRunRef, FeedRun, string | null, FeedResult> = {
  scheduledAt: feedScheduledAt,
  ref: (input, scheduledAt) => ({
    name: input.name,
    kind: input.kind,
    output: input.output,
    runId: runIdOf(scheduledAt),
    date: scheduledAt.slice(0, 10),
    ...(input.formats?.length ? { formats: input.formats } : {}),
  }),
  open: openFeedRun,
  plan: planFeed,
  work: async (feed) => {
    if (feed.input.kind === 'intent-contacts') await pageIntent(feed);
    else await searchInSlices(feed);
    return undefined;
  },
  finish: (feed) => finalizeFeed(feed),
};

/** The chain's first run's nominal time; when the last run was stopped by its output, this run takes over its id. */
async function feedScheduledAt(input: ScheduledFeedInput, jobs: JobActivityProxy): Promise<string> {
  const scheduledAt = scheduledTime(input);
  if (!patched(FEED_RESUME_STOPPED_PATCH)) return scheduledAt;
  // The last run was stopped by its output (and nothing committed since): this run finishes it, under its id.
  const stopped = { name: input.name, output: input.output, kind: input.kind, filters: input.filters };
  return (await jobs.stoppedFeedRun(stopped)) ?? scheduledAt;
}

/** The run's state, carried over or fresh, with its progress answered to the `progress` query. */
function openFeedRun(state: ScheduledRunState<ScheduledFeedInput, FeedRunRef>): FeedRun {
  const { input, run } = state;
  const carried = input.carried;
  const feed: FeedRun = {
    ...state,
    detectedAfter: carried?.detectedAfter ?? null,
    maxCalls: input.maxCalls ?? DEFAULT_MAX_CALLS,
    incomplete: carried?.incomplete ?? [],
    phase: carried ? 'running' : 'planning',
    next: carried?.next ?? 0,
    credits: carried?.credits ?? 0,
    returned: 0,
    error: undefined,
    fatal: undefined,
  };
  setHandler(feedProgressQuery, () => ({
    name: run.name,
    kind: run.kind,
    runId: run.runId,
    status: feed.phase,
    calls: feed.next,
    returned: feed.returned,
    credits: feed.credits,
  }));
  return feed;
}

/** The feed's lower time bound, planned by the chain's first run (the newest signal delivered so far). */
async function planFeed(feed: FeedRun): Promise<string | null> {
  const { input, run, scheduledAt } = feed;
  if (input.carried?.detectedAfter === undefined) {
    const planned = await feed.jobs.prepareFeedRun({
      run,
      scheduledAt,
      ...(input.since ? { since: input.since } : {}),
    });
    feed.detectedAfter = planned.detected_after;
  }
  feed.phase = 'running';
  return feed.detectedAfter;
}

/** The calls this run has made (the chain's earlier runs made the rest). */
const callsThisRun = (feed: FeedRun) => feed.next - (feed.input.carried?.next ?? 0);

/** Continues as new with the slices (or the page cursor) still to ask. */
function carryOn(feed: FeedRun, queue: FeedSlice[], cursor?: string | null): Promise<never> {
  return continueAsNew<typeof scheduledFeed>({
    ...feed.input,
    carried: {
      scheduledAt: feed.scheduledAt,
      startedAt: feed.startedAt,
      detectedAfter: feed.detectedAfter,
      queue,
      ...(cursor !== undefined ? { cursor } : {}),
      next: feed.next,
      credits: feed.credits,
      incomplete: feed.incomplete,
    },
  });
}

/**
 * A failure no retry cures (the output refuses writes for good): the run asks nothing more and is finalized as
 * `failed`, so that its manifest says what was paid for and not saved (the answer waits in the worker's spool).
 */
function stops(feed: FeedRun, failure: unknown): void {
  if (!isFatalFailure(failure)) return;
  if (!patched(FEED_FINALIZE_FAILED_PATCH)) throw failure;
  feed.fatal ??= failureMessage(failure);
}

/** A buyer-intent feed: its pages through `next_cursor`, to the last one or the run's bounds. */
async function pageIntent(feed: FeedRun): Promise<void> {
  const { input, run } = feed;
  const filters = input.filters as IntentFilters;
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  let cursor: string | null | undefined = input.carried ? input.carried.cursor : null;
  while (cursor !== undefined) {
    if (feed.next >= feed.maxCalls) {
      feed.incomplete.push({ reason: 'slice_limit' });
      break;
    }
    if (input.maxCredits !== undefined && feed.credits + pageSize > input.maxCredits) {
      feed.incomplete.push({ reason: 'budget' });
      break;
    }
    if (callsThisRun(feed) >= CALLS_PER_RUN) return carryOn(feed, [], cursor);
    try {
      const page = await feed.api.fetchFeedPage({ run, index: feed.next, filters, cursor, pageSize });
      feed.next += 1;
      feed.credits += page.credits;
      feed.returned += page.count;
      cursor = page.next_cursor ?? undefined;
    } catch (failure) {
      stops(feed, failure);
      feed.error = failureMessage(failure);
      feed.incomplete.push({ reason: 'failed' });
      break;
    }
  }
}

/** A search feed: its search asked in waves of slices, a full answer split into narrower slices until each fits. */
async function searchInSlices(feed: FeedRun): Promise<void> {
  const { input } = feed;
  const queue: FeedSlice[] = input.carried?.queue ?? [{ index: 0, filters: input.filters as SearchFilters }];
  if (!input.carried) feed.next = 1;
  const concurrency = Math.max(1, input.concurrency ?? 4);
  while (queue.length > 0) {
    if (callsThisRun(feed) >= CALLS_PER_RUN) return carryOn(feed, queue);
    const wave = queue.splice(0, concurrency);
    // Each call may return (and cost) up to SEARCH_CAP items; those that could cross the budget are not made.
    const room =
      input.maxCredits === undefined
        ? wave.length
        : Math.max(0, Math.floor((input.maxCredits - feed.credits) / SEARCH_CAP));
    const fits = wave.slice(0, room);
    for (const slice of wave.slice(room)) feed.incomplete.push(named(slice, 'budget'));
    const answers = await askWave(feed, fits);
    for (const [slice, answer] of answers) takeAnswer(feed, queue, slice, answer);
    // Stopped: no slice left is asked (each is named incomplete).
    if (feed.fatal !== undefined) for (const slice of queue.splice(0)) feed.incomplete.push(named(slice, 'failed'));
  }
}

/** One wave of slices asked at once; a slice's failure is its message. */
function askWave(feed: FeedRun, slices: FeedSlice[]): Promise<[FeedSlice, FeedCallResult | string][]> {
  return Promise.all(
    slices.map(async (slice): Promise<[FeedSlice, FeedCallResult | string]> => {
      try {
        return [
          slice,
          await feed.api.fetchFeedSearch({
            run: feed.run,
            index: slice.index,
            slice,
            detected_after: feed.detectedAfter,
          }),
        ];
      } catch (failure) {
        stops(feed, failure);
        return [slice, failureMessage(failure)];
      }
    }),
  );
}

/** A slice's answer counted; a full one is split into narrower slices queued after the rest, or named incomplete. */
function takeAnswer(feed: FeedRun, queue: FeedSlice[], slice: FeedSlice, answer: FeedCallResult | string): void {
  if (typeof answer === 'string') {
    feed.error ??= answer;
    feed.incomplete.push(named(slice, 'failed'));
    return;
  }
  feed.credits += answer.credits;
  feed.returned += answer.count;
  if (!answer.capped) return;
  const narrower = splitSlice(feed.input.kind, slice.filters, answer.types ?? []);
  if (!narrower) {
    feed.incomplete.push({ ...named(slice, 'capped'), returned: answer.count });
    return;
  }
  if (feed.next + narrower.length > feed.maxCalls) {
    feed.incomplete.push({ ...named(slice, 'slice_limit'), returned: answer.count });
    return;
  }
  for (const { filters, via } of narrower) {
    queue.push({ index: feed.next, filters, via: slice.via ? `${slice.via}, ${via}` : via });
    feed.next += 1;
  }
}

/** Writes the run's new lines, manifest and state; a run stopped by a fatal failure then fails with that result. */
async function finalizeFeed(feed: FeedRun): Promise<FeedResult> {
  const { input, run } = feed;
  feed.phase = 'finalizing';
  const result = await feed.jobs.finalizeFeedRun({
    run,
    status: feed.fatal === undefined ? 'completed' : 'failed',
    startedAt: feed.startedAt,
    scheduledAt: feed.scheduledAt,
    calls: feed.next,
    incomplete: feed.incomplete,
    filters: input.filters,
    ...(input.compression ? { compression: input.compression } : {}),
    ...(feed.fatal || feed.error ? { error: feed.fatal ?? feed.error } : {}),
    details: { workflow_id: workflowInfo().workflowId, max_credits: input.maxCredits ?? null },
  });
  if (feed.fatal !== undefined) {
    throw ApplicationFailure.nonRetryable(
      `feed ${run.name} run ${run.runId} failed: ${feed.fatal}`,
      FAILURE_TYPE.jobFailed,
      result,
    );
  }
  return result;
}

function named(slice: FeedSlice, reason: IncompleteSlice['reason']): IncompleteSlice {
  return { filters: slice.filters, ...(slice.via ? { via: slice.via } : {}), reason };
}

/** The run's nominal time: the schedule's, else `runAt`, else when the workflow chain started. */
function scheduledTime(input: ScheduledFeedInput): string {
  const info = workflowInfo();
  const fromSchedule = info.typedSearchAttributes.get(SCHEDULED_START);
  if (fromSchedule) return new Date(fromSchedule).toISOString();
  if (input.runAt && !Number.isNaN(Date.parse(input.runAt))) return new Date(input.runAt).toISOString();
  return info.startTime.toISOString();
}
