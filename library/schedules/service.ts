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
import { UsageError } from '../../connectors/errors.ts';
import { DEFAULT_TASK_QUEUE } from '../../workflows/constants.ts';
import { backfillRunId } from '../../workflows/push-ids.ts';
import type { ScheduledPushInput } from '../../workflows/scheduled-push.ts';
import { lastRunFailure, type RunFailure } from '../run-failure.ts';
import { resultThroughOutage } from '../temporal-outage.ts';
import {
  isSyncInput,
  kindOf,
  SCHEDULE_ID_PREFIXES,
  type ScheduleDefinition,
  type ScheduleInput,
  type ScheduleKind,
  type ScheduleRunResult,
  workflowStart,
} from './kinds.ts';
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

// The schedules service behind `signal-kit schedule`: Temporal Schedules named `signal-kit-push-<name>` (pushes and
// feeds) or `signal-kit-sync-<name>` (CRM syncs) that start the workflow of their kind (./kinds.ts), one-off runs and
// backfills, and the state a run keeps beside its output.

export { formatEvery } from './timing.ts';

/** A push's or feed's schedule id (`signal-kit-push-<name>`); a CRM sync's is `signal-kit-sync-<name>`. */
export const SCHEDULE_ID_PREFIX = 'signal-kit-push-';
export const scheduleIdOf = (name: string, kind: Pick<ScheduleKind, 'idPrefix'> = { idPrefix: SCHEDULE_ID_PREFIX }) =>
  `${kind.idPrefix}${name}`;

/** The schedule's name: its id without the prefix of its kind. */
const nameOfScheduleId = (scheduleId: string) =>
  scheduleId.slice(SCHEDULE_ID_PREFIXES.find((prefix) => scheduleId.startsWith(prefix))?.length ?? 0);

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
  const kind = kindOf(definition);
  const scheduleId = scheduleIdOf(checkScheduleName(definition.name), kind);
  // One name, one schedule, whatever its kind: its state lies under `<output>/<name>/`.
  const existing = await findSchedule(client, definition.name).catch(() => undefined);
  if (existing) {
    throw new UsageError(
      `schedule "${definition.name}" already exists (${existing.description.scheduleId}); delete it first`,
    );
  }
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
    if (!SCHEDULE_ID_PREFIXES.some((prefix) => summary.scheduleId.startsWith(prefix))) continue;
    found.push(infoOf(summary.scheduleId, summary, await manualRunsOf(client, summary.scheduleId)));
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
    ...infoOf(description.scheduleId, description, await manualRunsOf(client, description.scheduleId)),
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
  const kind = kindOf((description.action.args as [ScheduleInput] | undefined)?.[0] ?? {});
  return lastRunFailure(client, [...started, manualRunIdOf(name, kind)]);
}

/** The schedule's last committed run; describe still answers when the output cannot be read (say so instead). */
async function lastRunOf(input: ScheduleInput, name: string): Promise<object | { unreadable: string } | null> {
  try {
    return await kindOf(input).state.lastRun(input.output, name);
  } catch (error) {
    return { unreadable: `${input.output}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function describeSchedule(client: Client, name: string): Promise<ScheduleDescription> {
  return (await findSchedule(client, name)).description;
}

/** The schedule named `name`, under the id prefix of whichever kind it is (UsageError when there is none). */
async function findSchedule(client: Client, name: string) {
  checkScheduleName(name);
  for (const idPrefix of SCHEDULE_ID_PREFIXES) {
    const handle = client.schedule.getHandle(scheduleIdOf(name, { idPrefix }));
    try {
      return { handle, description: await handle.describe() };
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
  throw new UsageError(`no schedule named "${name}" (${SCHEDULE_ID_PREFIXES.map((p) => `${p}${name}`).join(', ')})`);
}

function inputOfDescription(name: string, description: ScheduleDescription): ScheduleInput {
  const input = (description.action.args as [ScheduleInput] | undefined)?.[0];
  if (!input) throw new UsageError(`schedule "${name}" carries no definition of what it runs`);
  return input;
}

/**
 * The workflow id of every run `schedule run` starts for a schedule: one id, so that Temporal itself refuses a second
 * while one is running (a closed one may be reused). The run's own id, which names its keys, comes from its start
 * time in the input. A CRM sync's is `signal-kit-sync-<name>/manual-run`, also for a schedule created with the old
 * prefix.
 */
export const manualRunIdOf = (name: string, kind?: Pick<ScheduleKind, 'idPrefix'>) =>
  `${scheduleIdOf(name, kind)}/manual-run`;

/** The push's runs in progress that its schedule started (the schedule's own record). */
function scheduledRunsInProgress(description: ScheduleDescription): string[] {
  return description.info.runningActions.map((action) => action.workflow.workflowId);
}

type StartedRun = { workflowId: string; result: () => Promise<ScheduleRunResult> };

/**
 * Starts one run of the schedule now, whatever its kind: a push's or feed's through `startPushRun`, a CRM sync's
 * night through `startSyncRun`.
 */
export async function startScheduleRun(
  client: Client,
  name: string,
  options: { fullRefresh?: boolean; now?: Date },
): Promise<StartedRun> {
  const description = await describeSchedule(client, name);
  const input = inputOfDescription(name, description);
  if (isSyncInput(input)) {
    if (options.fullRefresh) throw noBackfill(name, input.kind);
    return startNow(client, name, description, input, options);
  }
  return startPushRun(client, name, options, description);
}

const noBackfill = (name: string, kind: string) =>
  new UsageError(`schedule "${name}" is a ${kind} schedule: it has no backfill or --full-refresh`);

/**
 * Starts one night of a CRM sync now, outside its timing, under the workflow id `signal-kit-sync-<name>/manual-run`.
 * Refused while another night of the schedule is in progress (`SyncRunInProgressError`), whether the schedule or
 * `schedule run` started it.
 */
export async function startSyncRun(client: Client, name: string, options: { now?: Date } = {}): Promise<StartedRun> {
  const description = await describeSchedule(client, name);
  const input = inputOfDescription(name, description);
  if (!isSyncInput(input)) {
    throw new UsageError(`schedule "${name}" is not a CRM sync: start its runs with startPushRun`);
  }
  return startNow(client, name, description, input, options);
}

/**
 * Starts one run of a push or feed schedule outside its timing: now, as a full refresh, or for a past window (a push
 * only). A run now or a full refresh is refused while another run of the schedule is in progress
 * (`PushRunInProgressError`), whether the schedule or `schedule run` started it; a backfill is not, since it never
 * touches the watermarks and writes under its own run id.
 */
export async function startPushRun(
  client: Client,
  name: string,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
  described?: ScheduleDescription,
): Promise<StartedRun> {
  const description = described ?? (await describeSchedule(client, name));
  const input = inputOfDescription(name, description);
  if (!kindOf(input).backfills && (options.window || options.fullRefresh)) {
    throw noBackfill(name, (input as { kind: string }).kind);
  }
  if (isSyncInput(input)) {
    throw new UsageError(`schedule "${name}" is a CRM sync: start its nights with startSyncRun`);
  }
  return startNow(client, name, description, input, options);
}

/** One run of the schedule started now (or for a push's window), refused by its kind while another is running. */
async function startNow(
  client: Client,
  name: string,
  description: ScheduleDescription,
  input: ScheduleInput,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
): Promise<StartedRun> {
  const kind = kindOf(input);
  if (!options.window) {
    const running = scheduledRunsInProgress(description);
    if (running.length > 0) throw kind.inProgress(name, running);
  }
  // To the millisecond: two runs started in the same second are two runs (a run id names its keys).
  const at = (options.now ?? new Date()).toISOString();
  const workflowId = options.window
    ? `${scheduleIdOf(name, kind)}-${backfillRunId(options.window)}`
    : manualRunIdOf(name, kind);
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
      throw kind.inProgress(name, [workflowId]);
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
  const definition = inputOfDescription(name, description);
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
  await (await findSchedule(client, name)).handle.pause(note ?? 'paused by signal-kit');
}

export async function unpausePushSchedule(client: Client, name: string, note?: string): Promise<void> {
  await (await findSchedule(client, name)).handle.unpause(note ?? 'unpaused by signal-kit');
}

/** Starts a run now. Without `overlap`, the schedule's own policy applies (so a run in progress is not doubled). */
export async function triggerPushSchedule(
  client: Client,
  name: string,
  overlap?: ScheduleOverlapPolicy,
): Promise<void> {
  const { handle, description } = await findSchedule(client, name);
  await handle.trigger(overlap ?? description.policies.overlap);
}

export async function deletePushSchedule(client: Client, name: string): Promise<void> {
  await (await findSchedule(client, name)).handle.delete();
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
    name: nameOfScheduleId(scheduleId),
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
async function manualRunsOf(client: Client, scheduleId: string): Promise<RecentRun[]> {
  const runs: RecentRun[] = [];
  // `manualRunIdOf` of the schedule's name and kind: its id with `/manual-run`.
  const query = `WorkflowId = '${scheduleId}/manual-run'`;
  for await (const run of client.workflow.list({ query, pageSize: RECENT_RUNS })) {
    const at = run.startTime.toISOString();
    runs.push({ scheduledAt: at, takenAt: at, workflowId: run.workflowId, by: 'schedule run' });
    if (runs.length >= RECENT_RUNS) break;
  }
  return runs;
}
