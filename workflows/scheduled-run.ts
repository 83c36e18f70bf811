import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';
import type { JobStatus } from '../activities/run/types.ts';
import { MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import { apiActivityOptions, storageActivityOptions } from './activity-options.ts';
import {
  type BatchTotals,
  emptyTotals,
  finishRun,
  type RunEnding,
  runWindow,
  type WindowOptions,
  type WindowOutcome,
} from './batch-runner.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_BATCHES_PER_RUN, DEFAULT_TASK_QUEUE } from './constants.ts';
import type { ScheduledRunState } from './run-state.ts';

/**
 * The one shape of a scheduled run (a push, a feed, a night of the CRM sync), workflow side: open the run (its
 * activities, its nominal time and the keys it names, its progress), plan it on the chain's first run, do its calls
 * (in windows, continuing as new between them), then finish (finalize: manifest, then state). Each kind gives only
 * its own steps (`ScheduledRunSteps`); the order of the commands is the kinds' own order before they shared this, so
 * histories recorded then replay.
 */

/** What the skeleton reads of every scheduled kind's input. */
export interface ScheduledRunInput {
  taskQueue?: string;
  apiTaskQueue?: string;
  /** Carried across continue-as-new: the run's nominal time and its start stay the chain's first. */
  carried?: { scheduledAt: string; startedAt: string };
}

/** One kind's own steps. `Run` is the kind's state of one run (the shared state and its own fields). */
export interface ScheduledRunSteps<I extends ScheduledRunInput, Ref, Run extends ScheduledRunState<I, Ref>, Plan, R> {
  /** The run's nominal time on the chain's first run (the schedule's, else `runAt`, else when the chain started). */
  scheduledAt(input: I, jobs: ScheduledRunState<I, Ref>['jobs']): string | Promise<string>;
  /** The run's references: the keys it writes follow from its name and nominal time. */
  ref(input: I, scheduledAt: string): Ref;
  /** The kind's state of the run, with its progress answered to the `progress` query. */
  open(state: ScheduledRunState<I, Ref>): Run;
  /** Its plan: made on the chain's first run, carried by the others. */
  plan(run: Run): Promise<Plan>;
  /** Its calls; continues as new between windows (never returns then). */
  work(run: Run, plan: Plan): Promise<WindowOutcome | undefined>;
  /** Its finalize: the manifest, then the state. */
  finish(run: Run, outcome: WindowOutcome | undefined): Promise<R>;
}

/** One run of a scheduled kind, through its steps. */
export async function runScheduled<I extends ScheduledRunInput, Ref, Run extends ScheduledRunState<I, Ref>, Plan, R>(
  input: I,
  steps: ScheduledRunSteps<I, Ref, Run, Plan, R>,
): Promise<R> {
  const jobs = proxyActivities<JobActivities>(storageActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE));
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE));
  const scheduledAt = input.carried?.scheduledAt ?? (await steps.scheduledAt(input, jobs));
  const run = steps.open({
    input,
    run: steps.ref(input, scheduledAt),
    jobs,
    api,
    scheduledAt,
    startedAt: input.carried?.startedAt ?? new Date().toISOString(),
  });
  const plan = await steps.plan(run);
  const outcome = await steps.work(run, plan);
  return steps.finish(run, outcome);
}

/**
 * One window of calls; when it ended only because this run's share of calls is done (not stopped by a fatal failure
 * or the budget), `carryOn` continues as new from the next call, so the history stays small however long the run.
 */
export async function windowOrCarryOn(
  options: WindowOptions,
  carryOn: (next: number) => Promise<never>,
): Promise<WindowOutcome> {
  const outcome = await runWindow(options);
  const stopped = outcome.fatal !== undefined || outcome.budgetExhausted;
  if (!stopped && outcome.next < options.total) return carryOn(outcome.next);
  return outcome;
}

/** What a kind whose calls are numbered batches (a push, a night of the sync) reads of its input besides the above. */
export interface BatchedRunInput<Plan> extends ScheduledRunInput {
  signalTypes?: string[];
  /** Signals per company and call (at most 500). */
  limit?: number;
  maxCredits?: number;
  concurrency?: number;
  batchesPerRun?: number;
  carried?: { scheduledAt: string; startedAt: string; plan: Plan; next: number; totals: BatchTotals };
}

/** A batched run's state: the shared one, its totals and plan (carried across continue-as-new), its phase. */
export interface BatchedRun<I extends BatchedRunInput<Plan>, Ref, Plan> extends ScheduledRunState<I, Ref> {
  readonly totals: BatchTotals;
  plan: Plan | undefined;
  phase: JobStatus | 'planning' | 'finalizing';
}

/** The batched part of a run's state, carried over or fresh. */
export function openBatchedRun<I extends BatchedRunInput<Plan>, Ref, Plan>(
  state: ScheduledRunState<I, Ref>,
): BatchedRun<I, Ref, Plan> {
  const carried = state.input.carried;
  return {
    ...state,
    totals: carried?.totals ?? emptyTotals(),
    plan: carried?.plan,
    phase: carried?.plan ? 'running' : 'planning',
  };
}

/** The filters each call sends: the signal types asked, `more` (a push's subtypes), the limit per company. */
export function signalFilters<M extends object>(
  input: Pick<BatchedRunInput<unknown>, 'signalTypes' | 'limit'>,
  more?: M,
): { signal_types?: string[]; limit: number } & Partial<M> {
  return {
    ...(input.signalTypes?.length ? { signal_types: input.signalTypes } : {}),
    ...more,
    limit: Math.min(MAX_SIGNALS_PER_CALL, input.limit ?? MAX_SIGNALS_PER_CALL),
  } as { signal_types?: string[]; limit: number } & Partial<M>;
}

/** The window over a run's calls `[from, total)` with its input's concurrency, calls per run and budget. */
export function callWindow<I extends BatchedRunInput<Plan>, Ref, Plan>(
  run: BatchedRun<I, Ref, Plan>,
  calls: Pick<WindowOptions, 'from' | 'total' | 'worstCaseCredits' | 'run'>,
): WindowOptions {
  const { input, totals } = run;
  return {
    from: calls.from,
    total: calls.total,
    concurrency: Math.max(1, input.concurrency ?? 4),
    limit: input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN,
    maxCredits: input.maxCredits,
    worstCaseCredits: calls.worstCaseCredits,
    totals,
    run: calls.run,
  };
}

/** Finalizes a batched run (`finalize`: its kind's activity), its phase following, as `finishRun` does. */
export function finishBatchedRun<I extends BatchedRunInput<Plan>, Ref, Plan, R extends { status: JobStatus }>(
  run: BatchedRun<I, Ref, Plan>,
  outcome: WindowOutcome,
  label: string,
  finalize: (ending: RunEnding) => Promise<R>,
): Promise<R> {
  return finishRun(
    outcome,
    run.totals,
    label,
    (phase) => {
      run.phase = phase;
    },
    finalize,
  );
}

/** Continues a batched run as new from call `next`: its times, plan and totals carried, with `more` of its kind's own. */
export function carryOnFrom<I extends BatchedRunInput<Plan>, Ref, Plan>(
  run: BatchedRun<I, Ref, Plan>,
  plan: Plan,
  next: number,
  more: Omit<NonNullable<I['carried']>, 'scheduledAt' | 'startedAt' | 'plan' | 'next' | 'totals'>,
): Promise<never> {
  const { scheduledAt, startedAt, totals } = run;
  return continueAsNew<(input: I) => Promise<unknown>>({
    ...run.input,
    carried: { scheduledAt, startedAt, plan, next, totals, ...more },
  });
}
