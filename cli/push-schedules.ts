import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleDescription,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleSummary,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { FeedResult } from '../activities/feeds/types.ts';
import { watermarksKey } from '../activities/push/layout.ts';
import type { PushResult, PushWindow } from '../activities/push/types.ts';
import { readPushState, resetPushState } from '../activities/push/watermarks.ts';
import { syncStatePointerKey } from '../activities/sync/layout.ts';
import { readSyncPointer, resetSyncState } from '../activities/sync/state.ts';
import type { SyncResult } from '../activities/sync/types.ts';
import { openStore } from '../config/storage.ts';
import type { TemporalConfig } from '../config/worker.ts';
import { resultThroughOutage } from '../library/temporal-outage.ts';
import { DEFAULT_TASK_QUEUE } from '../workflows/constants.ts';
import { type CrmSyncInput, crmSync } from '../workflows/crm-sync.ts';
import { backfillRunId } from '../workflows/push-ids.ts';
import { type ScheduledFeedInput, scheduledFeed } from '../workflows/scheduled-feed.ts';
import { type ScheduledPushInput, scheduledPush } from '../workflows/scheduled-push.ts';
import { UsageError } from './args.ts';

// The push schedules service behind `signal-kit schedule`: Temporal Schedules named `signal-kit-push-<name>` that
// start the `scheduledPush` workflow, one-off runs and backfills, and the push's state kept beside its output.

/** Milliseconds → a duration string Temporal reads back exactly: the largest whole unit (`1d`, `90m`, `86401s`). */
export function formatEvery(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export const SCHEDULE_ID_PREFIX = 'signal-kit-push-';
export const scheduleIdOf = (name: string) => `${SCHEDULE_ID_PREFIX}${name}`;

/** When a schedule runs and how it starts: every definition has it beside its kind's settings. */
export interface ScheduleTiming {
  everyMs: number;
  overlap?: ScheduleOverlapPolicy;
  paused?: boolean;
  note?: string;
}

/** What `create` needs: the push settings a user picks (the workflow's input) plus the schedule's timing and state. */
export interface PushScheduleDefinition
  extends Pick<
      ScheduledPushInput,
      | 'name'
      | 'watchlist'
      | 'output'
      | 'column'
      | 'signalTypes'
      | 'signalSubtypes'
      | 'limit'
      | 'since'
      | 'maxCredits'
      | 'concurrency'
      | 'lookbackMs'
      | 'formats'
    >,
    ScheduleTiming {}

/** What `create --kind company-search|contact-search|intent-contacts` needs: the feed and the schedule's timing. */
export interface FeedScheduleDefinition
  extends Pick<
      ScheduledFeedInput,
      'name' | 'kind' | 'output' | 'filters' | 'since' | 'maxCredits' | 'concurrency' | 'formats'
    >,
    ScheduleTiming {}

/** What `create --kind enrich` needs: the nightly CRM sync (docs/nightly-crm-enrichment.md) and its timing. */
export interface SyncScheduleDefinition
  extends Pick<
      CrmSyncInput,
      | 'name'
      | 'kind'
      | 'input'
      | 'output'
      | 'column'
      | 'idColumn'
      | 'keepColumns'
      | 'signalTypes'
      | 'limit'
      | 'maxCredits'
      | 'concurrency'
      | 'formats'
    >,
    ScheduleTiming {}

export type ScheduleDefinition = PushScheduleDefinition | FeedScheduleDefinition | SyncScheduleDefinition;

/** The kinds of schedule whose runs are nights of the CRM sync (the others are feeds, or a push without a kind). */
export const SYNC_KINDS = ['enrich', 'enrich-contacts'] as const;
const isSyncKind = (kind: unknown) => (SYNC_KINDS as readonly unknown[]).includes(kind);

const isSync = (definition: ScheduleDefinition): definition is SyncScheduleDefinition =>
  'kind' in definition && isSyncKind(definition.kind);
const isFeed = (definition: ScheduleDefinition): definition is FeedScheduleDefinition =>
  'kind' in definition && !isSyncKind(definition.kind);

type ScheduleInput = ScheduledPushInput | ScheduledFeedInput | CrmSyncInput;
/** A schedule's workflow input is a feed's or a sync's when it names a kind (a push's never does). */
const isFeedInput = (input: ScheduleInput): input is ScheduledFeedInput => 'kind' in input && !isSyncKind(input.kind);
const isSyncInput = (input: ScheduleInput): input is CrmSyncInput => 'kind' in input && isSyncKind(input.kind);

export interface PushScheduleInfo {
  name: string;
  scheduleId: string;
  paused: boolean;
  note?: string;
  every?: string;
  nextRuns: string[];
  recentRuns: { scheduledAt: string; takenAt: string; workflowId: string }[];
}

export interface PushScheduleDetails extends PushScheduleInfo {
  overlap: string;
  push: Omit<ScheduledPushInput, 'taskQueue' | 'apiTaskQueue'> | undefined;
  taskQueue: string;
  actionsTaken: number;
  skippedOverlap: number;
  running: string[];
  createdAt: string;
  /** The last run that committed the schedule's state (`_watermarks.json`, a sync's `_state.json`), or null. */
  lastRun: LastRunView | object | { unreadable: string } | null;
}

export type LastRunView = NonNullable<Awaited<ReturnType<typeof readPushState>>['lastRun']>;

/** The workflow input a schedule carries (task queues from the configuration of whoever creates it). */
export function pushInputOf(definition: PushScheduleDefinition, temporal: TemporalConfig): ScheduledPushInput {
  const { everyMs: _every, overlap: _overlap, paused: _paused, note: _note, ...push } = definition;
  return { ...push, taskQueue: temporal.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
}

/** The workflow input a feed schedule carries. */
export function feedInputOf(definition: FeedScheduleDefinition, temporal: TemporalConfig): ScheduledFeedInput {
  const { everyMs: _every, overlap: _overlap, paused: _paused, note: _note, ...feed } = definition;
  return { ...feed, taskQueue: temporal.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
}

/** A sync definition without the schedule's timing: the workflow input every night is started with. */
function withoutTiming(definition: SyncScheduleDefinition): Omit<CrmSyncInput, 'taskQueue' | 'apiTaskQueue'> {
  const { everyMs: _every, overlap: _overlap, paused: _paused, note: _note, ...sync } = definition;
  return sync;
}

export async function createPushSchedule(
  client: Client,
  temporal: TemporalConfig,
  definition: ScheduleDefinition,
): Promise<string> {
  const scheduleId = scheduleIdOf(definition.name);
  const queues = { taskQueue: temporal.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
  const action = isSync(definition)
    ? { workflowType: crmSync, args: [{ ...withoutTiming(definition), ...queues }] as [CrmSyncInput] }
    : isFeed(definition)
      ? { workflowType: scheduledFeed, args: [feedInputOf(definition, temporal)] as [ScheduledFeedInput] }
      : { workflowType: scheduledPush, args: [pushInputOf(definition, temporal)] as [ScheduledPushInput] };
  const memo = isSync(definition) ? 'crm-sync' : isFeed(definition) ? 'scheduled-feed' : 'scheduled-push';
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: definition.everyMs }] },
      action: {
        type: 'startWorkflow',
        workflowId: scheduleId,
        taskQueue: temporal.taskQueue,
        ...(action as { workflowType: typeof scheduledPush; args: [ScheduledPushInput] }),
      },
      policies: { overlap: definition.overlap ?? ScheduleOverlapPolicy.SKIP },
      memo: { 'signal-kit': memo, name: definition.name },
      state: { paused: definition.paused ?? false, ...(definition.note ? { note: definition.note } : {}) },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) {
      throw new UsageError(`schedule "${definition.name}" already exists (${scheduleId}); delete it first`);
    }
    throw error;
  }
  return scheduleId;
}

export async function listPushSchedules(client: Client): Promise<PushScheduleInfo[]> {
  const found: PushScheduleInfo[] = [];
  for await (const summary of client.schedule.list()) {
    if (!summary.scheduleId.startsWith(SCHEDULE_ID_PREFIX)) continue;
    found.push(infoOf(summary.scheduleId, summary));
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : 1));
}

export async function describePushSchedule(client: Client, name: string): Promise<PushScheduleDetails> {
  const description = await describeSchedule(client, name);
  const args = description.action.args as [ScheduledPushInput] | undefined;
  const push = args?.[0];
  const { taskQueue: _tq, apiTaskQueue: _atq, ...definition } = push ?? ({} as ScheduledPushInput);
  return {
    ...infoOf(description.scheduleId, description),
    overlap: String(description.policies.overlap).toLowerCase().replace(/_/g, '-'),
    push: push ? definition : undefined,
    taskQueue: description.action.taskQueue,
    actionsTaken: description.info.numActionsTaken,
    skippedOverlap: description.info.numActionsSkippedOverlap,
    running: description.info.runningActions.map((action) => action.workflow.workflowId),
    createdAt: description.info.createdAt.toISOString(),
    lastRun: push ? await lastRunOf(push, name) : null,
  };
}

/** The push's last committed run; describe still answers when the output cannot be read (say so instead). */
async function lastRunOf(input: ScheduleInput, name: string): Promise<object | { unreadable: string } | null> {
  const output = input.output;
  try {
    if (isSyncInput(input)) return (await readSyncPointer(openStore(output), name))?.last_run ?? null;
    return (await readPushState(openStore(output), name)).lastRun ?? null;
  } catch (error) {
    return { unreadable: `${output}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The schedule's push definition (what every run of it is started with). */
async function pushOf(client: Client, name: string): Promise<ScheduledPushInput> {
  return pushOfDescription(name, await describeSchedule(client, name));
}

function describeSchedule(client: Client, name: string): Promise<ScheduleDescription> {
  return known(name, () => client.schedule.getHandle(scheduleIdOf(name)).describe());
}

function pushOfDescription(name: string, description: ScheduleDescription): ScheduledPushInput {
  const push = (description.action.args as [ScheduledPushInput] | undefined)?.[0];
  if (!push) throw new UsageError(`schedule "${name}" carries no push definition`);
  return push;
}

/**
 * A run of the push is in progress, so another one now would read the same watermarks, push the same new signals
 * again and pay for them twice.
 */
export class PushRunInProgressError extends Error {
  override readonly name = 'PushRunInProgressError';
  readonly push: string;
  readonly running: readonly string[];
  constructor(push: string, running: readonly string[]) {
    super(
      `a run of push "${push}" is in progress (${running.join(', ')}): wait for it to finish ` +
        `(temporal workflow result --workflow-id ${running[0]}), then run again`,
    );
    this.push = push;
    this.running = running;
  }
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
 * Starts one run of the schedule's push outside its timing: now, as a full refresh, or for a past window. A run now
 * or a full refresh is refused while another run of the push is in progress (`PushRunInProgressError`), whether the
 * schedule or `schedule run` started it; a backfill is not, since it never touches the watermarks and writes under
 * its own run id.
 */
export async function startPushRun(
  client: Client,
  name: string,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
): Promise<{ workflowId: string; result: () => Promise<PushResult | FeedResult | SyncResult> }> {
  const description = await describeSchedule(client, name);
  const push = pushOfDescription(name, description);
  const given = push as ScheduleInput;
  if (isFeedInput(given)) return startRunNow(client, name, description, given, options, scheduledFeed);
  if (isSyncInput(given)) return startRunNow(client, name, description, given, options, crmSync);
  if (!options.window) {
    const running = scheduledRunsInProgress(description);
    if (running.length > 0) throw new PushRunInProgressError(name, running);
  }
  // To the millisecond: two runs started in the same second are two runs (a run id names its keys).
  const at = (options.now ?? new Date()).toISOString();
  const workflowId = options.window ? `${scheduleIdOf(name)}-${backfillRunId(options.window)}` : manualRunIdOf(name);
  const input: ScheduledPushInput = {
    ...push,
    runAt: at,
    ...(options.fullRefresh ? { fullRefresh: true } : {}),
    ...(options.window ? { window: options.window } : {}),
  };
  try {
    const handle = await client.workflow.start(scheduledPush, {
      workflowId,
      taskQueue: push.taskQueue ?? DEFAULT_TASK_QUEUE,
      args: [input],
    });
    return { workflowId, result: () => resultThroughOutage(handle) };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError && !options.window)
      throw new PushRunInProgressError(name, [workflowId]);
    throw error;
  }
}

/**
 * `schedule run` of a feed or a CRM sync: one run now (neither has a backfill or a full refresh), refused while one
 * is running.
 */
async function startRunNow<I extends ScheduledFeedInput | CrmSyncInput, R>(
  client: Client,
  name: string,
  description: ScheduleDescription,
  feed: I,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
  workflow: (input: I) => Promise<R>,
): Promise<{ workflowId: string; result: () => Promise<R> }> {
  if (options.window || options.fullRefresh) {
    throw new UsageError(`schedule "${name}" is a ${feed.kind} schedule: it has no backfill or --full-refresh`);
  }
  const running = scheduledRunsInProgress(description);
  if (running.length > 0) throw new PushRunInProgressError(name, running);
  const workflowId = manualRunIdOf(name);
  try {
    const handle = await client.workflow.start(workflow as (input: ScheduleInput) => Promise<R>, {
      workflowId,
      taskQueue: feed.taskQueue ?? DEFAULT_TASK_QUEUE,
      args: [{ ...feed, runAt: (options.now ?? new Date()).toISOString() }],
    });
    return { workflowId, result: () => resultThroughOutage(handle) };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw new PushRunInProgressError(name, [workflowId]);
    throw error;
  }
}

/** What `schedule state` shows: the watermarks in summary (or per domain), the remembered signals, the last run. */
export async function pushState(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[]; all?: boolean },
): Promise<Record<string, unknown>> {
  const definition = options.output ? undefined : ((await pushOf(client, name)) as ScheduleInput);
  const output = options.output ?? definition!.output;
  if (definition && isSyncInput(definition)) return syncStateView(output, name);
  const state = await readPushState(openStore(output), name);
  const times = [...state.marks.values()].sort();
  const view: Record<string, unknown> = {
    name,
    state: openStore(output).urlOf(watermarksKey(name)),
    committedBy: state.runId,
    domains: state.marks.size,
    watermarks: new Set(times).size,
    oldest: times[0] ?? null,
    newest: times.at(-1) ?? null,
    remembering: state.pushed.size,
    lastRun: state.lastRun ?? null,
  };
  const wanted = options.all ? [...state.marks.keys(), ...state.pushed.keys()] : (options.domains ?? []);
  if (wanted.length > 0) {
    view['perDomain'] = Object.fromEntries(
      [...new Set(wanted)]
        .sort()
        .map((domain) => [
          domain,
          { watermark: state.marks.get(domain) ?? null, pushedAboveWatermark: state.pushed.get(domain)?.length ?? 0 },
        ]),
    );
  }
  return view;
}

/** What `schedule state` shows of a CRM sync: where its state is, which run committed it, its companies, the last run. */
async function syncStateView(output: string, name: string): Promise<Record<string, unknown>> {
  const store = openStore(output);
  const pointer = await readSyncPointer(store, name);
  return {
    name,
    state: store.urlOf(syncStatePointerKey(name)),
    committedBy: pointer?.run_id ?? null,
    updatedAt: pointer?.updated_at ?? null,
    companies: pointer?.companies ?? 0,
    lastRun: pointer?.last_run ?? null,
  };
}

/** Forgets watermarks (all, or of `domains`); refused while a run of the schedule is in progress. */
export async function resetPush(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[] },
): Promise<Record<string, unknown>> {
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
  if (isSyncKind((details?.push as { kind?: unknown } | undefined)?.kind)) {
    await resetSyncState(openStore(output), name);
    return { name, reset: 'all' };
  }
  const reset = await resetPushState(openStore(output), name, options.domains);
  return { name, reset: options.domains ?? 'all', ...reset };
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
  const handle = client.schedule.getHandle(scheduleIdOf(name));
  const policy = overlap ?? (await known(name, () => handle.describe())).policies.overlap;
  await known(name, () => handle.trigger(policy));
}

export async function deletePushSchedule(client: Client, name: string): Promise<void> {
  await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).delete());
}

async function known<T>(name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof ScheduleNotFoundError)
      throw new UsageError(`no schedule named "${name}" (${scheduleIdOf(name)})`);
    throw error;
  }
}

function infoOf(scheduleId: string, schedule: ScheduleSummary | ScheduleDescription): PushScheduleInfo {
  const every = schedule.spec?.intervals?.[0]?.every;
  return {
    name: scheduleId.slice(SCHEDULE_ID_PREFIX.length),
    scheduleId,
    paused: schedule.state.paused,
    ...(schedule.state.note ? { note: schedule.state.note } : {}),
    ...(every !== undefined ? { every: formatEvery(Number(every)) } : {}),
    nextRuns: schedule.info.nextActionTimes.slice(0, 3).map((time) => time.toISOString()),
    recentRuns: schedule.info.recentActions.map((action) => ({
      scheduledAt: action.scheduledAt.toISOString(),
      takenAt: action.takenAt.toISOString(),
      workflowId: action.action.workflow.workflowId,
    })),
  };
}
