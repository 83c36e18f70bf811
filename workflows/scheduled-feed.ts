import { ApplicationFailure, defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { continueAsNew, defineQuery, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type {
  FeedCallResult,
  FeedFilters,
  FeedKind,
  FeedResult,
  FeedRunRef,
  FeedSlice,
  IncompleteSlice,
  IntentFilters,
  SearchFilters,
} from '../activities/feeds/types.ts';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { apiActivityOptions, isFatalFailure, storageActivityOptions } from './activity-options.ts';
import { failureMessage } from './batch-runner.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from './constants.ts';
import { SEARCH_CAP, splitSlice } from './feed-slices.ts';
import { runIdOf } from './push-ids.ts';

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
export async function scheduledFeed(input: ScheduledFeedInput): Promise<FeedResult> {
  const jobs = proxyActivities<JobActivities>(storageActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE));
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE));
  const carried = input.carried;
  let scheduledAt = carried?.scheduledAt ?? scheduledTime(input);
  if (!carried && patched(FEED_RESUME_STOPPED_PATCH)) {
    // The last run was stopped by its output (and nothing committed since): this run finishes it, under its id.
    const stopped = { name: input.name, output: input.output, kind: input.kind, filters: input.filters };
    scheduledAt = (await jobs.stoppedFeedRun(stopped)) ?? scheduledAt;
  }
  const run: FeedRunRef = {
    name: input.name,
    kind: input.kind,
    output: input.output,
    runId: runIdOf(scheduledAt),
    date: scheduledAt.slice(0, 10),
    ...(input.formats?.length ? { formats: input.formats } : {}),
  };
  const startedAt = carried?.startedAt ?? new Date().toISOString();
  let phase: FeedProgress['status'] = carried ? 'running' : 'planning';
  let next = carried?.next ?? 0;
  let credits = carried?.credits ?? 0;
  let returned = 0;
  const incomplete: IncompleteSlice[] = carried?.incomplete ?? [];
  setHandler(feedProgressQuery, () => ({
    name: run.name,
    kind: run.kind,
    runId: run.runId,
    status: phase,
    calls: next,
    returned,
    credits,
  }));

  const detectedAfter =
    carried?.detectedAfter !== undefined
      ? carried.detectedAfter
      : (await jobs.prepareFeedRun({ run, scheduledAt, ...(input.since ? { since: input.since } : {}) }))
          .detected_after;
  phase = 'running';
  const maxCalls = input.maxCalls ?? DEFAULT_MAX_CALLS;
  const budgetLeft = (worst: number) => input.maxCredits === undefined || credits + worst <= input.maxCredits;
  const callsThisRun = () => next - (carried?.next ?? 0);
  const carry = (queue: FeedSlice[], cursor?: string | null): Promise<never> =>
    continueAsNew<typeof scheduledFeed>({
      ...input,
      carried: {
        scheduledAt,
        startedAt,
        detectedAfter,
        queue,
        ...(cursor !== undefined ? { cursor } : {}),
        next,
        credits,
        incomplete,
      },
    });
  let error: string | undefined;
  let fatal: string | undefined;
  /**
   * A failure no retry cures (the output refuses writes for good): the run asks nothing more and is finalized as
   * `failed`, so that its manifest says what was paid for and not saved (the answer waits in the worker's spool).
   */
  const stops = (failure: unknown): void => {
    if (!isFatalFailure(failure)) return;
    if (!patched(FEED_FINALIZE_FAILED_PATCH)) throw failure;
    fatal ??= failureMessage(failure);
  };

  if (input.kind === 'intent-contacts') {
    const filters = input.filters as IntentFilters;
    const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
    let cursor: string | null | undefined = carried ? carried.cursor : null;
    while (cursor !== undefined) {
      if (next >= maxCalls) {
        incomplete.push({ reason: 'slice_limit' });
        break;
      }
      if (!budgetLeft(pageSize)) {
        incomplete.push({ reason: 'budget' });
        break;
      }
      if (callsThisRun() >= CALLS_PER_RUN) return carry([], cursor);
      try {
        const page = await api.fetchFeedPage({ run, index: next, filters, cursor, pageSize });
        next += 1;
        credits += page.credits;
        returned += page.count;
        cursor = page.next_cursor ?? undefined;
      } catch (failure) {
        stops(failure);
        error = failureMessage(failure);
        incomplete.push({ reason: 'failed' });
        break;
      }
    }
  } else {
    const queue: FeedSlice[] = carried?.queue ?? [{ index: 0, filters: input.filters as SearchFilters }];
    if (!carried) next = 1;
    const concurrency = Math.max(1, input.concurrency ?? 4);
    while (queue.length > 0) {
      if (callsThisRun() >= CALLS_PER_RUN) return carry(queue);
      const wave = queue.splice(0, concurrency);
      // Each call may return (and cost) up to SEARCH_CAP items; those that could cross the budget are not made.
      const room =
        input.maxCredits === undefined
          ? wave.length
          : Math.max(0, Math.floor((input.maxCredits - credits) / SEARCH_CAP));
      const fits = wave.slice(0, room);
      for (const slice of wave.slice(room)) incomplete.push(named(slice, 'budget'));
      const answers = await Promise.all(
        fits.map(async (slice): Promise<[FeedSlice, FeedCallResult | string]> => {
          try {
            return [
              slice,
              await api.fetchFeedSearch({ run, index: slice.index, slice, detected_after: detectedAfter }),
            ];
          } catch (failure) {
            stops(failure);
            return [slice, failureMessage(failure)];
          }
        }),
      );
      for (const [slice, answer] of answers) {
        if (typeof answer === 'string') {
          error ??= answer;
          incomplete.push(named(slice, 'failed'));
          continue;
        }
        credits += answer.credits;
        returned += answer.count;
        if (!answer.capped) continue;
        const narrower = splitSlice(input.kind, slice.filters, answer.types ?? []);
        if (!narrower) {
          incomplete.push({ ...named(slice, 'capped'), returned: answer.count });
          continue;
        }
        if (next + narrower.length > maxCalls) {
          incomplete.push({ ...named(slice, 'slice_limit'), returned: answer.count });
          continue;
        }
        for (const { filters, via } of narrower) {
          queue.push({ index: next, filters, via: slice.via ? `${slice.via}, ${via}` : via });
          next += 1;
        }
      }
      // Stopped: no slice left is asked (each is named incomplete).
      if (fatal !== undefined) for (const slice of queue.splice(0)) incomplete.push(named(slice, 'failed'));
    }
  }

  phase = 'finalizing';
  const result = await jobs.finalizeFeedRun({
    run,
    status: fatal === undefined ? 'completed' : 'failed',
    startedAt,
    scheduledAt,
    calls: next,
    incomplete,
    filters: input.filters,
    ...(input.compression ? { compression: input.compression } : {}),
    ...(fatal || error ? { error: fatal ?? error } : {}),
    details: { workflow_id: workflowInfo().workflowId, max_credits: input.maxCredits ?? null },
  });
  if (fatal !== undefined) {
    throw ApplicationFailure.nonRetryable(
      `feed ${run.name} run ${run.runId} failed: ${fatal}`,
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
