import { continueAsNew, defineQuery, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { JobStatus } from '../activities/jobs/types.ts';
import type { PushFilters, PushPlan, PushResult, PushRound, PushRunRef, PushWindow } from '../activities/push/types.ts';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import { apiActivityOptions, isFatalFailure, storageActivityOptions } from './activity-options.ts';
import { type BatchTotals, emptyTotals, failureMessage, finishRun, runWindow } from './batch-runner.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_BATCHES_PER_RUN, DEFAULT_TASK_QUEUE } from './constants.ts';
import { backfillRunId, runIdOf } from './push-ids.ts';
import { scheduledTime } from './scheduled-time.ts';

/** The target of a push schedule: one incremental run over a watchlist. */
export interface ScheduledPushInput {
  /** The push's name: `<output>/<name>/` holds its watermarks, signals and manifests. */
  name: string;
  /** Watchlist URL (file://, s3://, gs:// or a path): CSV with a `domain` column, or JSONL. */
  watchlist: string;
  /** Base output URL. */
  output: string;
  /** CSV column or JSONL field of the domain (default: `domain`, `website`, `url` or `company_domain`). */
  column?: string;
  signalTypes?: string[];
  signalSubtypes?: string[];
  /**
   * Signals per domain in a run's first call, at most 500 (the default). A domain that has more new ones is asked
   * again with 500 in a catch-up call (the signals already received are paid again and reported as overlap).
   */
  limit?: number;
  /** ISO 8601: where a domain seen for the first time starts (default: its whole visible history). */
  since?: string;
  /** No bulk call is started that could take this run's credits over this; the rest waits for the next run. */
  maxCredits?: number;
  /** Bulk calls in flight at once (default 4). */
  concurrency?: number;
  taskQueue?: string;
  apiTaskQueue?: string;
  batchesPerRun?: number;
  /** The run's time when it is not started by a schedule (default: when the workflow chain started). */
  runAt?: string;
  /** Ask this many milliseconds before each watermark again, for signals the service shows late. */
  lookbackMs?: number;
  /** Ignore the watermarks (start every domain from `since`) and replace them with this run's. */
  fullRefresh?: boolean;
  /** Backfill: the signals detected in `[from, to)`, written as their own run; the watermarks are not touched. */
  window?: PushWindow;
  /** Formats of the flat signals table written beside each part (docs/tables.md); none when absent. */
  formats?: OutputFormat[];
  /** Carried across continue-as-new; not for callers. */
  carried?: PushCarried;
}

export interface PushCarried {
  scheduledAt: string;
  startedAt: string;
  plan: PushPlan;
  /** The catch-up rounds planned so far. */
  rounds?: PushRound[];
  next: number;
  totals: BatchTotals;
  signals: number;
}

export interface PushProgress {
  name: string;
  runId: string;
  status: JobStatus | 'planning' | 'finalizing';
  batchesTotal: number;
  batchesDone: number;
  batchesFailed: number;
  domains: number;
  signals: number;
  credits: number;
}

export const pushProgressQuery = defineQuery<PushProgress>('progress');

/** Runs started before a run recovered an earlier run's kept answers replay without that step. */
export const RECOVER_KEPT_PATCH = 'push-recover-kept-answers';

/**
 * One run of a scheduled push. Plans the run (watermark groups → bulk calls, in the bucket), fetches only signals
 * after each domain's watermark through the sliding window, writes them under
 * `<output>/<name>/signals/dt=<date>/run-<runId>/`, then the manifest, then the new watermarks.
 *
 * The run id and date come from the schedule's nominal time, so a retried or re-triggered run for the same time
 * writes the same keys, and its finished batches are not fetched (or paid for) again.
 */
export async function scheduledPush(input: ScheduledPushInput): Promise<PushResult> {
  const taskQueue = input.taskQueue ?? DEFAULT_TASK_QUEUE;
  const jobs = proxyActivities<JobActivities>(storageActivityOptions(taskQueue));
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE));
  const scheduledAt = input.carried?.scheduledAt ?? scheduledTime(input.runAt);
  const run: PushRunRef = {
    name: input.name,
    output: input.output,
    runId: input.window ? backfillRunId(input.window) : runIdOf(scheduledAt),
    date: (input.window?.from ? new Date(input.window.from).toISOString() : scheduledAt).slice(0, 10),
    ...(input.formats?.length ? { formats: input.formats } : {}),
  };
  const startedAt = input.carried?.startedAt ?? new Date().toISOString();
  const totals = input.carried?.totals ?? emptyTotals();
  const filters: PushFilters = {
    ...(input.signalTypes?.length ? { signal_types: input.signalTypes } : {}),
    ...(input.signalSubtypes?.length ? { signal_subtypes: input.signalSubtypes } : {}),
    limit: Math.min(MAX_SIGNALS_PER_CALL, input.limit ?? MAX_SIGNALS_PER_CALL),
  };
  let plan = input.carried?.plan;
  let phase: PushProgress['status'] = plan ? 'running' : 'planning';
  let signals = input.carried?.signals ?? 0;

  setHandler(pushProgressQuery, () => ({
    name: run.name,
    runId: run.runId,
    status: phase,
    batchesTotal: plan?.batches ?? 0,
    batchesDone: totals.batchesDone,
    batchesFailed: totals.batchesFailed,
    domains: totals.ok + totals.not_found + totals.error,
    signals,
    credits: totals.credits,
  }));

  const mode = {
    ...(input.window ? { window: input.window } : {}),
    ...(input.fullRefresh ? { fullRefresh: true } : {}),
    ...(input.lookbackMs ? { lookbackMs: input.lookbackMs } : {}),
  };
  if (!plan && !input.window && !input.fullRefresh && patched(RECOVER_KEPT_PATCH)) {
    // Before the watermarks are read: an earlier run's answers that its output refused and a worker kept are
    // published and that run finalized with them, so that this run does not pay for them again.
    await api.recoverKeptPushAnswers({ run, filters });
  }
  plan ??= await jobs.preparePushRun({
    run,
    watchlist: input.watchlist,
    limit: filters.limit,
    ...mode,
    ...(input.column ? { column: input.column } : {}),
    ...(input.since ? { since: input.since } : {}),
  });
  phase = 'running';
  const planned = plan;
  const rounds: PushRound[] = input.carried?.rounds ?? [];
  let next = input.carried?.next ?? 0;
  const current = () => rounds.at(-1);
  // The most one call can cost: its domains (a catch-up call has at most the domains left behind) × limit × 2.
  const worstCase = (limit: number) =>
    Math.min(100, current()?.domains ?? planned.distinct) * limit * CREDITS.perEnrichedSignal;

  let outcome: Awaited<ReturnType<typeof runWindow>>;
  for (;;) {
    const round = current();
    const total = round ? round.first + round.count : planned.batches;
    const limit = round ? MAX_SIGNALS_PER_CALL : filters.limit;
    outcome = await runWindow({
      from: next,
      total,
      concurrency: Math.max(1, input.concurrency ?? 4),
      limit: input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
      maxCredits: input.maxCredits,
      worstCaseCredits: () => worstCase(limit),
      totals,
      run: async (index) => {
        try {
          // Its line in Temporal's web UI: which batch of which push run, not a bare activity name.
          const summary = `push ${run.name} batch ${index + 1} of ${total} · run ${run.runId}`;
          const result = await api.fetchPushBatch.executeWithOptions({ summary }, [{ run, index, filters }]);
          signals += result.counts.lines;
          return result;
        } catch (error) {
          if (isFatalFailure(error)) throw error;
          // Retries are spent: the batch's domains keep their watermarks, and the next run asks for them again.
          return jobs.recordFailedPushBatch({ run, index, message: failureMessage(error) });
        }
      },
    });
    const stopped = outcome.fatal !== undefined || outcome.budgetExhausted;
    if (!stopped && outcome.next < total) {
      return continueAsNew<typeof scheduledPush>({
        ...input,
        carried: { scheduledAt, startedAt, plan: planned, rounds, next: outcome.next, totals, signals },
      });
    }
    if (stopped) break;
    // Round 1: domains that filled a small first limit, asked again with 500. Round 2: domains still cut at 500,
    // asked once per signal type they have.
    const done = round?.round ?? 0;
    const kind = done === 0 && filters.limit < MAX_SIGNALS_PER_CALL ? 'limit' : done < 2 ? 'narrow' : undefined;
    if (kind === undefined) break;
    const nextRound = await jobs.preparePushCatchUp({
      run,
      round: kind === 'limit' ? 1 : 2,
      kind,
      from: 0,
      to: total,
      limit: MAX_SIGNALS_PER_CALL,
      ...(filters.signal_types ? { signalTypes: filters.signal_types } : {}),
    });
    rounds.push(nextRound);
    next = nextRound.first;
  }

  const details = {
    filters,
    since: input.since ?? null,
    lookback_ms: input.lookbackMs ?? 0,
    max_credits: input.maxCredits ?? null,
    workflow_id: workflowInfo().workflowId,
  };
  return finishRun(
    outcome,
    totals,
    `push ${run.name} run ${run.runId}`,
    (p) => (phase = p),
    (ending) =>
      jobs.finalizePushRun({
        run,
        watchlist: input.watchlist,
        startedAt,
        scheduledAt,
        rounds,
        ...mode,
        ...ending,
        details,
      }),
  );
}

export { backfillRunId, runIdOf };
