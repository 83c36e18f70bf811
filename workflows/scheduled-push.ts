import { defineQuery, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { JobStatus } from '../activities/jobs/types.ts';
import type { PushFilters, PushPlan, PushResult, PushRound, PushRunRef, PushWindow } from '../activities/push/types.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import { isFatalFailure } from './activity-options.ts';
import { type BatchTotals, failureMessage, type WindowOutcome } from './batch-runner.ts';
import { DEFAULT_TASK_QUEUE } from './constants.ts';
import { backfillRunId, runIdOf } from './push-ids.ts';
import { type AlertFacts, withRunAlert } from './run-alert.ts';
import type { ScheduledRunState } from './run-state.ts';
import {
  type BatchedRun,
  callWindow,
  carryOnFrom,
  finishBatchedRun,
  openBatchedRun,
  runScheduled,
  type ScheduledRunSteps,
  signalFilters,
  windowOrCarryOn,
} from './scheduled-run.ts';
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
  /** Where an alert goes when a run fails, stops on its budget or ends with failed batches (`--notify`). */
  notify?: string;
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
export function scheduledPush(input: ScheduledPushInput): Promise<PushResult> {
  if (!input.notify) return runScheduled(input, pushSteps);
  const scheduledAt = input.carried?.scheduledAt ?? scheduledTime(input.runAt);
  const runId = input.window ? backfillRunId(input.window) : runIdOf(scheduledAt);
  const target = {
    url: input.notify,
    schedule: input.name,
    kind: 'push',
    taskQueue: input.taskQueue ?? DEFAULT_TASK_QUEUE,
  };
  return withRunAlert(target, runId, () => runScheduled(input, pushSteps), pushAlertFacts);
}

/** What a push run's alert says of it: its counts, credits and manifest. */
function pushAlertFacts(result: PushResult): AlertFacts {
  const { domains, signals, errors, incomplete, incompleteDomains, watermarksAdvanced } = result;
  return {
    status: result.status,
    runId: result.runId,
    counts: { domains, signals, errors, incomplete, incompleteDomains, watermarksAdvanced },
    credits: result.credits,
    files: { manifest: result.manifestUrl },
  };
}

/** One run of a push, up to its continue-as-new: what its steps share. */
interface PushRun extends BatchedRun<ScheduledPushInput, PushRunRef, PushPlan> {
  readonly filters: PushFilters;
  /** A backfill's window, a full refresh, a lookback: what planning and finalizing are told. */
  readonly mode: Pick<ScheduledPushInput, 'window' | 'fullRefresh' | 'lookbackMs'>;
  /** The catch-up rounds planned so far (the last is the one running). */
  readonly rounds: PushRound[];
  signals: number;
}

/** A push run's own steps in the scheduled run's skeleton (workflows/scheduled-run.ts). */
const pushSteps: ScheduledRunSteps<ScheduledPushInput, PushRunRef, PushRun, PushPlan, PushResult> = {
  scheduledAt: (input) => scheduledTime(input.runAt),
  ref: (input, scheduledAt) => ({
    name: input.name,
    output: input.output,
    runId: input.window ? backfillRunId(input.window) : runIdOf(scheduledAt),
    date: (input.window?.from ? new Date(input.window.from).toISOString() : scheduledAt).slice(0, 10),
    ...(input.formats?.length ? { formats: input.formats } : {}),
  }),
  open: openPushRun,
  plan: planPush,
  work: runRounds,
  finish: (push, outcome) => finalizePush(push, outcome!),
};

/** The run's state, carried over or fresh, with its progress answered to the `progress` query. */
function openPushRun(state: ScheduledRunState<ScheduledPushInput, PushRunRef>): PushRun {
  const { input } = state;
  const push: PushRun = {
    ...openBatchedRun(state),
    filters: signalFilters(input, input.signalSubtypes?.length ? { signal_subtypes: input.signalSubtypes } : {}),
    mode: {
      ...(input.window ? { window: input.window } : {}),
      ...(input.fullRefresh ? { fullRefresh: true } : {}),
      ...(input.lookbackMs ? { lookbackMs: input.lookbackMs } : {}),
    },
    rounds: input.carried?.rounds ?? [],
    signals: input.carried?.signals ?? 0,
  };
  const { run, totals } = push;
  setHandler(pushProgressQuery, () => ({
    name: run.name,
    runId: run.runId,
    status: push.phase,
    batchesTotal: push.plan?.batches ?? 0,
    batchesDone: totals.batchesDone,
    batchesFailed: totals.batchesFailed,
    domains: totals.ok + totals.not_found + totals.error,
    signals: push.signals,
    credits: totals.credits,
  }));
  return push;
}

/** A run's first step: an earlier run's kept answers recovered, then the watchlist planned into bulk calls. */
async function planPush(push: PushRun): Promise<PushPlan> {
  const { input, run, filters } = push;
  if (push.plan) return push.plan;
  if (!input.window && !input.fullRefresh && patched(RECOVER_KEPT_PATCH)) {
    // Before the watermarks are read: an earlier run's answers that its output refused and a worker kept are
    // published and that run finalized with them, so that this run does not pay for them again.
    await push.api.recoverKeptPushAnswers({ run, filters });
  }
  push.plan = await push.jobs.preparePushRun({
    run,
    watchlist: input.watchlist,
    limit: filters.limit,
    ...push.mode,
    ...(input.column ? { column: input.column } : {}),
    ...(input.since ? { since: input.since } : {}),
  });
  return push.plan;
}

/**
 * The planned calls, then the catch-up rounds: round 1 asks the domains that filled a small first limit again with
 * 500, round 2 the domains still cut at 500 once per signal type they have. Continues as new between windows.
 */
async function runRounds(push: PushRun, planned: PushPlan): Promise<WindowOutcome> {
  const { input, run, filters, rounds } = push;
  push.phase = 'running';
  let next = input.carried?.next ?? 0;
  const current = () => rounds.at(-1);
  // The most one call can cost: its domains (a catch-up call has at most the domains left behind) × limit × 2.
  const worstCase = (limit: number) =>
    Math.min(100, current()?.domains ?? planned.distinct) * limit * CREDITS.perEnrichedSignal;
  for (;;) {
    const round = current();
    const total = round ? round.first + round.count : planned.batches;
    const limit = round ? MAX_SIGNALS_PER_CALL : filters.limit;
    const window = callWindow(push, {
      from: next,
      total,
      worstCaseCredits: () => worstCase(limit),
      run: (index: number) => fetchBatch(push, index, total),
    });
    const outcome = await windowOrCarryOn(window, (from) =>
      carryOnFrom(push, planned, from, { rounds, signals: push.signals }),
    );
    if (outcome.fatal !== undefined || outcome.budgetExhausted) return outcome;
    const done = round?.round ?? 0;
    const kind = done === 0 && filters.limit < MAX_SIGNALS_PER_CALL ? 'limit' : done < 2 ? 'narrow' : undefined;
    if (kind === undefined) return outcome;
    const nextRound = await push.jobs.preparePushCatchUp({
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
}

/** One bulk call of the run; a call whose retries are spent leaves its domains' watermarks for the next run. */
async function fetchBatch(push: PushRun, index: number, total: number) {
  const { run, filters } = push;
  try {
    // Its line in Temporal's web UI: which batch of which push run, not a bare activity name.
    const summary = `push ${run.name} batch ${index + 1} of ${total} · run ${run.runId}`;
    const result = await push.api.fetchPushBatch.executeWithOptions({ summary }, [{ run, index, filters }]);
    push.signals += result.counts.lines;
    return result;
  } catch (error) {
    if (isFatalFailure(error)) throw error;
    return push.jobs.recordFailedPushBatch({ run, index, message: failureMessage(error) });
  }
}

/** Writes the run's manifest and, unless it stopped, the new watermarks. */
function finalizePush(push: PushRun, outcome: WindowOutcome): Promise<PushResult> {
  const { input, run } = push;
  const details = {
    filters: push.filters,
    since: input.since ?? null,
    lookback_ms: input.lookbackMs ?? 0,
    max_credits: input.maxCredits ?? null,
    workflow_id: workflowInfo().workflowId,
  };
  return finishBatchedRun(push, outcome, `push ${run.name} run ${run.runId}`, (ending) =>
    push.jobs.finalizePushRun({
      run,
      watchlist: input.watchlist,
      startedAt: push.startedAt,
      scheduledAt: push.scheduledAt,
      rounds: push.rounds,
      ...push.mode,
      ...ending,
      details,
    }),
  );
}

export { backfillRunId, runIdOf };
