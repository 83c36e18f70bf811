import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleDescription,
  ScheduleNotFoundError,
  type ScheduleOptionsAction,
  ScheduleOverlapPolicy,
  type ScheduleSummary,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { PushWindow } from '../../activities/push/types.ts';
import type { TemporalConfig } from '../../config/worker.ts';
import { PushRunInProgressError, UsageError } from '../../connectors/errors.ts';
import { DEFAULT_TASK_QUEUE } from '../../workflows/constants.ts';
import { backfillRunId } from '../../workflows/push-ids.ts';
import type { ScheduledPushInput } from '../../workflows/scheduled-push.ts';
import { lastRunFailure, type RunFailure } from '../run-failure.ts';
import { resultThroughOutage } from '../temporal-outage.ts';
import { kindOf, type ScheduleDefinition, type ScheduleInput, type ScheduleRunResult, workflowStart } from './kinds.ts';
import { checkScheduleName } from './names.ts';
import { refusedSpec, type ScheduleTimingView, scheduleSpecOf, timingOf, timingView } from './timing.ts';

export {
  type FeedScheduleDefinition,
  type PushScheduleDefinition,
  SCHEDULE_KINDS,
  type ScheduleDefinition,
  type ScheduleTiming,
  type SyncScheduleDefinition,
} from './kinds.ts';

// The schedules service behind `signal-kit schedule`: Temporal Schedules named `signal-kit-push-<name>` that start
// the workflow of their kind (./kinds.ts), one-off runs and backfills, and the state a run keeps beside its output.

export { formatEvery } from './timing.ts';

export const SCHEDULE_ID_PREFIX = 'signal-kit-push-';
export const scheduleIdOf = (name: string) => `${SCHEDULE_ID_PREFIX}${name}`;

export interface PushScheduleInfo {
  name: string;
  scheduleId: string;
  paused: boolean;
  note?: string;
  every?: string;
  at?: string;
  cron?: string;
  timezone?: string;
  nextRuns: string[];
  /** The latest runs, the schedule's own and those `schedule run` started (`by`), oldest first. */
  recentRuns: RecentRun[];
}

export interface RecentRun {
  scheduledAt: string;
  takenAt: string;
  workflowId: string;
  by: 'schedule' | 'schedule run';
}

export interface PushScheduleDetails extends PushScheduleInfo {
  /** What the schedule runs: `push`, a feed's kind (`company-search`, ...) or a CRM sync's (`enrich`, ...). */
  kind: string;
  overlap: string;
  push: Omit<ScheduledPushInput, 'taskQueue' | 'apiTaskQueue'> | undefined;
  taskQueue: string;
  actionsTaken: number;
  skippedOverlap: number;
  running: string[];
  createdAt: string;
  /** The last run that committed the schedule's state (`_watermarks.json`, a sync's `_state.json`), or null. */
  lastRun: object | { unreadable: string } | null;
  /** The schedule's latest run when it did not complete, and why (the file, the row or byte, the fix); else null. */
  lastFailure: RunFailure | null;
}

/** The workflow input a schedule carries: its definition without the timing, with the task queues of its creator. */
export function scheduleInputOf(definition: ScheduleDefinition, temporal: TemporalConfig): ScheduleInput {
  const {
    everyMs: _every,
    at: _at,
    cron: _cron,
    timezone: _tz,
    overlap: _overlap,
    paused: _paused,
    note: _note,
    ...input
  } = definition;
  return { ...input, taskQueue: temporal.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
}

export async function createPushSchedule(
  client: Client,
  temporal: TemporalConfig,
  definition: ScheduleDefinition,
): Promise<string> {
  const scheduleId = scheduleIdOf(checkScheduleName(definition.name));
  const kind = kindOf(definition);
  // The workflow of the definition's kind with the input that kind takes (kinds.ts `workflowStart`).
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowId: scheduleId,
    taskQueue: temporal.taskQueue,
    ...workflowStart(scheduleInputOf(definition, temporal)),
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec: scheduleSpecOf(definition),
      action,
      policies: { overlap: definition.overlap ?? ScheduleOverlapPolicy.SKIP },
      memo: { 'signal-kit': kind.memo, name: definition.name, timing: timingOf(definition) },
      state: { paused: definition.paused ?? false, ...(definition.note ? { note: definition.note } : {}) },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) {
      throw new UsageError(`schedule "${definition.name}" already exists (${scheduleId}); delete it first`);
    }
    throw refusedSpec(error, definition);
  }
  return scheduleId;
}

export async function listPushSchedules(client: Client): Promise<PushScheduleInfo[]> {
  const found: PushScheduleInfo[] = [];
  for await (const summary of client.schedule.list()) {
    if (!summary.scheduleId.startsWith(SCHEDULE_ID_PREFIX)) continue;
    const name = summary.scheduleId.slice(SCHEDULE_ID_PREFIX.length);
    found.push(infoOf(summary.scheduleId, summary, await manualRunsOf(client, name)));
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : 1));
}

export async function describePushSchedule(client: Client, name: string): Promise<PushScheduleDetails> {
  checkScheduleName(name);
  const description = await describeSchedule(client, name);
  const args = description.action.args as [ScheduledPushInput] | undefined;
  const push = args?.[0];
  const { taskQueue: _tq, apiTaskQueue: _atq, ...definition } = push ?? ({} as ScheduledPushInput);
  return {
    ...infoOf(description.scheduleId, description, await manualRunsOf(client, name)),
    kind: push && 'kind' in push ? String(push.kind) : 'push',
    overlap: String(description.policies.overlap).toLowerCase().replace(/_/g, '-'),
    push: push ? definition : undefined,
    taskQueue: description.action.taskQueue,
    actionsTaken: description.info.numActionsTaken,
    skippedOverlap: description.info.numActionsSkippedOverlap,
    running: description.info.runningActions.map((action) => action.workflow.workflowId),
    createdAt: description.info.createdAt.toISOString(),
    lastRun: push ? await lastRunOf(push, name) : null,
    lastFailure: await lastFailureOf(client, name, description),
  };
}

/** The schedule's latest run, the schedule's or `schedule run`'s, when it did not complete: why (else null). */
function lastFailureOf(client: Client, name: string, description: ScheduleDescription): Promise<RunFailure | null> {
  const started = description.info.recentActions.map((action) => action.action.workflow.workflowId);
  return lastRunFailure(client, [...started, manualRunIdOf(name)]);
}

/** The schedule's last committed run; describe still answers when the output cannot be read (say so instead). */
async function lastRunOf(input: ScheduleInput, name: string): Promise<object | { unreadable: string } | null> {
  try {
    return await kindOf(input).state.lastRun(input.output, name);
  } catch (error) {
    return { unreadable: `${input.output}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function describeSchedule(client: Client, name: string): Promise<ScheduleDescription> {
  return known(name, () => client.schedule.getHandle(scheduleIdOf(name)).describe());
}

function pushOfDescription(name: string, description: ScheduleDescription): ScheduledPushInput {
  const push = (description.action.args as [ScheduledPushInput] | undefined)?.[0];
  if (!push) throw new UsageError(`schedule "${name}" carries no definition of what it runs`);
  return push;
}

/**
 * The workflow id of every run `schedule run` starts for a push: one id, so that Temporal itself refuses a second
 * while one is running (a closed one may be reused). The run's own id, which names its keys, comes from its start
 * time in the input.
 */
export const manualRunIdOf = (name: string) => `${scheduleIdOf(name)}/manual-run`;

/** The push's runs in progress that its schedule started (the schedule's own record). */
function scheduledRunsInProgress(description: ScheduleDescription): string[] {
  return description.info.runningActions.map((action) => action.workflow.workflowId);
}

/**
 * Starts one run of the schedule outside its timing: now, as a full refresh, or for a past window (a push only). A
 * run now or a full refresh is refused while another run of the schedule is in progress (`PushRunInProgressError`),
 * whether the schedule or `schedule run` started it; a backfill is not, since it never touches the watermarks and
 * writes under its own run id.
 */
export async function startPushRun(
  client: Client,
  name: string,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
): Promise<{ workflowId: string; result: () => Promise<ScheduleRunResult> }> {
  checkScheduleName(name);
  const description = await describeSchedule(client, name);
  const input = pushOfDescription(name, description) as ScheduleInput;
  if (!kindOf(input).backfills && (options.window || options.fullRefresh)) {
    const kind = (input as { kind: string }).kind;
    throw new UsageError(`schedule "${name}" is a ${kind} schedule: it has no backfill or --full-refresh`);
  }
  if (!options.window) {
    const running = scheduledRunsInProgress(description);
    if (running.length > 0) throw new PushRunInProgressError(name, running);
  }
  // To the millisecond: two runs started in the same second are two runs (a run id names its keys).
  const at = (options.now ?? new Date()).toISOString();
  const workflowId = options.window ? `${scheduleIdOf(name)}-${backfillRunId(options.window)}` : manualRunIdOf(name);
  const run: ScheduleInput = {
    ...input,
    runAt: at,
    ...(options.fullRefresh ? { fullRefresh: true } : {}),
    ...(options.window ? { window: options.window } : {}),
  };
  try {
    const { workflowType, args } = workflowStart(run);
    const handle = await client.workflow.start(workflowType, {
      workflowId,
      taskQueue: input.taskQueue ?? DEFAULT_TASK_QUEUE,
      args,
    });
    return { workflowId, result: () => resultThroughOutage(handle) };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError && !options.window)
      throw new PushRunInProgressError(name, [workflowId]);
    throw error;
  }
}

/** What `schedule state` shows: a push's watermarks in summary (or per domain), a sync's state, the last run. */
export async function pushState(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[]; all?: boolean },
): Promise<Record<string, unknown>> {
  checkScheduleName(name);
  if (options.output) {
    // Given `--output`, the schedule is not asked for: its state is read as a push's.
    return kindOf({}).state.view(options.output, name, options);
  }
  const description = await describeSchedule(client, name);
  const definition = pushOfDescription(name, description) as ScheduleInput;
  const view = await kindOf(definition).state.view(definition.output, name, options);
  return { ...view, lastFailure: await lastFailureOf(client, name, description) };
}

/** Forgets watermarks (all, or of `domains`); refused while a run of the schedule is in progress. */
export async function resetPush(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[] },
): Promise<Record<string, unknown>> {
  checkScheduleName(name);
  let output = options.output;
  let details: PushScheduleDetails | undefined;
  try {
    details = await describePushSchedule(client, name);
    if (details.running.length > 0) {
      throw new UsageError(`schedule "${name}" has a run in progress (${details.running.join(', ')}); wait or pause`);
    }
    output ??= details.push?.output;
  } catch (error) {
    if (!(error instanceof UsageError) || output === undefined || /in progress/.test(error.message)) throw error;
  }
  if (output === undefined) throw new UsageError(`--output is required: schedule "${name}" has no output`);
  return kindOf(details?.push ?? {}).state.reset(output, name, options.domains);
}

export async function pausePushSchedule(client: Client, name: string, note?: string): Promise<void> {
  await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).pause(note ?? 'paused by signal-kit'));
}

export async function unpausePushSchedule(client: Client, name: string, note?: string): Promise<void> {
  await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).unpause(note ?? 'unpaused by signal-kit'));
}

/** Starts a run now. Without `overlap`, the schedule's own policy applies (so a run in progress is not doubled). */
export async function triggerPushSchedule(
  client: Client,
  name: string,
  overlap?: ScheduleOverlapPolicy,
): Promise<void> {
  const handle = client.schedule.getHandle(scheduleIdOf(checkScheduleName(name)));
  const policy = overlap ?? (await known(name, () => handle.describe())).policies.overlap;
  await known(name, () => handle.trigger(policy));
}

export async function deletePushSchedule(client: Client, name: string): Promise<void> {
  await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).delete());
}

async function known<T>(name: string, body: () => Promise<T>): Promise<T> {
  checkScheduleName(name);
  try {
    return await body();
  } catch (error) {
    if (error instanceof ScheduleNotFoundError)
      throw new UsageError(`no schedule named "${name}" (${scheduleIdOf(name)})`);
    throw error;
  }
}

function infoOf(
  scheduleId: string,
  schedule: ScheduleSummary | ScheduleDescription,
  manualRuns: readonly RecentRun[],
): PushScheduleInfo {
  const taken: RecentRun[] = schedule.info.recentActions.map((action) => ({
    scheduledAt: action.scheduledAt.toISOString(),
    takenAt: action.takenAt.toISOString(),
    workflowId: action.action.workflow.workflowId,
    by: 'schedule',
  }));
  const timing: ScheduleTimingView = timingView(schedule.memo?.['timing'], schedule.spec);
  return {
    name: scheduleId.slice(SCHEDULE_ID_PREFIX.length),
    scheduleId,
    paused: schedule.state.paused,
    ...(schedule.state.note ? { note: schedule.state.note } : {}),
    ...timing,
    nextRuns: schedule.info.nextActionTimes.slice(0, 3).map((time) => time.toISOString()),
    recentRuns: [...taken, ...manualRuns].sort((a, b) => (a.takenAt < b.takenAt ? -1 : 1)).slice(-RECENT_RUNS),
  };
}

/** How many recent runs `list` and `describe` show (Temporal keeps the schedule's last 10 actions). */
const RECENT_RUNS = 10;

/**
 * The runs `schedule run` started (one workflow id, so each is a run of it in Temporal's visibility store, which can
 * lag about a second): the schedule's own record holds only the runs it started itself.
 */
async function manualRunsOf(client: Client, name: string): Promise<RecentRun[]> {
  const runs: RecentRun[] = [];
  const query = `WorkflowId = '${manualRunIdOf(name)}'`;
  for await (const run of client.workflow.list({ query, pageSize: RECENT_RUNS })) {
    const at = run.startTime.toISOString();
    runs.push({ scheduledAt: at, takenAt: at, workflowId: run.workflowId, by: 'schedule run' });
    if (runs.length >= RECENT_RUNS) break;
  }
  return runs;
}
