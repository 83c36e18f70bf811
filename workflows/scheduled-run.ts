import { proxyActivities } from '@temporalio/workflow';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';
import { apiActivityOptions, storageActivityOptions } from './activity-options.ts';
import { runWindow, type WindowOptions, type WindowOutcome } from './batch-runner.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from './constants.ts';
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
