import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleDescription,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleSummary,
  WorkflowFailedError,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { PUSH_NAME, watermarksKey } from '../../activities/push/layout.ts';
import type { PushResult, PushWindow } from '../../activities/push/types.ts';
import { readPushState, resetPushState } from '../../activities/push/watermarks.ts';
import { parseTemporalConfig, type TemporalConfig } from '../../config/worker.ts';
import { MAX_SIGNAL_SUBTYPES, MAX_SIGNALS_PER_CALL } from '../../connectors/signal-api/limits.ts';
import { openStore } from '../../connectors/storage/index.ts';
import { DEFAULT_TASK_QUEUE } from '../../workflows/constants.ts';
import { backfillRunId, runIdOf } from '../../workflows/push-ids.ts';
import { type ScheduledPushInput, scheduledPush } from '../../workflows/scheduled-push.ts';
import { isoDate, list, locationUrl, positiveInt, required, UsageError } from '../args.ts';
import { EXIT } from '../job-service.ts';
import { connectClient } from '../temporal.ts';

/**
 * `signal-kit schedule …`: scheduled pushes on Temporal Schedules. A schedule `signal-kit-push-<name>` starts the
 * `scheduledPush` workflow every `--every`; each run fetches only the signals after each domain's watermark.
 */
export const SCHEDULE_ID_PREFIX = 'signal-kit-push-';
export const scheduleIdOf = (name: string) => `${SCHEDULE_ID_PREFIX}${name}`;

/** What `create` needs; everything but the timing becomes the workflow's input. */
export interface PushScheduleDefinition {
  name: string;
  watchlist: string;
  output: string;
  everyMs: number;
  column?: string;
  signalTypes?: string[];
  signalSubtypes?: string[];
  limit?: number;
  since?: string;
  maxCredits?: number;
  concurrency?: number;
  lookbackMs?: number;
  overlap?: ScheduleOverlapPolicy;
  paused?: boolean;
  note?: string;
}

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
  /** The last run that committed the push's state (from `_watermarks.json`), or null before the first. */
  lastRun: LastRunView | { unreadable: string } | null;
}

export type LastRunView = NonNullable<Awaited<ReturnType<typeof readPushState>>['lastRun']>;

// ─── flag parsing ─────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A duration as Temporal takes it (`6h`, `30m`, `1d`, `90s`, `1.5h`, `2 days`: the `ms` strings of its `Duration`),
 * parsed by Temporal's own parser → milliseconds, at least one second.
 */
export function parseEvery(flag: string, value: string | undefined): number {
  const raw = required(flag, value).trim();
  let ms: number;
  try {
    ms = msToNumber(raw as Duration);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || !/[a-z]$/i.test(raw)) {
    throw new UsageError(`--${flag} must be a duration such as 30m, 6h, 1d or 90m, got "${value}"`);
  }
  if (ms < 1000) throw new UsageError(`--${flag} must be at least 1s, got "${value}"`);
  return ms;
}

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

const OVERLAP_POLICIES = ['SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', 'TERMINATE_OTHER', 'ALLOW_ALL'] as const;

export function parseOverlap(flag: string, value: string | undefined): ScheduleOverlapPolicy | undefined {
  if (value === undefined) return undefined;
  const policy = value.trim().toUpperCase().replace(/-/g, '_');
  const match = OVERLAP_POLICIES.find((name) => name === policy);
  if (!match) {
    const names = OVERLAP_POLICIES.map((name) => name.toLowerCase().replace(/_/g, '-')).join(', ');
    throw new UsageError(`--${flag} must be one of ${names}, got "${value}"`);
  }
  return ScheduleOverlapPolicy[match];
}

function pushName(flag: string | undefined, value: string | undefined, command: string): string {
  if (value === undefined || value === '') {
    throw new UsageError(flag ? `--${flag} is required` : `usage: signal-kit schedule ${command} NAME`);
  }
  if (!PUSH_NAME.test(value)) {
    const what = flag ? `--${flag}` : 'NAME';
    throw new UsageError(`${what} must be lower-case letters, digits, "-" or "_" (at most 63), got "${value}"`);
  }
  return value;
}

function watchlistUrl(flag: string, value: string | undefined): string {
  const url = locationUrl(flag, value);
  if (!/\.(csv|jsonl|ndjson)(\.gz)?$/i.test(url)) {
    throw new UsageError(`--${flag} must be a .csv or .jsonl/.ndjson file (optionally .gz), got "${value}"`);
  }
  return url;
}

/** `schedule create`'s flags, as commander hands them over (declared in cli/program.ts). */
export interface CreateFlags {
  name?: string;
  watchlist?: string;
  output?: string;
  every?: string;
  column?: string;
  signalTypes?: string;
  signalSubtypes?: string;
  limit?: string;
  since?: string;
  maxCredits?: string;
  concurrency?: string;
  lookback?: string;
  overlap?: string;
  paused?: boolean;
  note?: string;
}

/** `schedule create`'s flags as the schedule to create; every mistake is a `UsageError` naming its flag. */
export function parseCreate(values: CreateFlags): PushScheduleDefinition {
  const limit = positiveInt('limit', values.limit);
  if (limit !== undefined && limit > MAX_SIGNALS_PER_CALL)
    throw new UsageError(`--limit must be at most ${MAX_SIGNALS_PER_CALL} (signals per domain)`);
  const subtypes = list(values.signalSubtypes);
  if (subtypes && subtypes.length > MAX_SIGNAL_SUBTYPES)
    throw new UsageError(`--signal-subtypes takes at most ${MAX_SIGNAL_SUBTYPES} subtypes`);
  const types = list(values.signalTypes);
  const definition: PushScheduleDefinition = {
    name: pushName('name', values.name, 'create'),
    watchlist: watchlistUrl('watchlist', values.watchlist),
    output: locationUrl('output', values.output),
    everyMs: parseEvery('every', values.every),
    overlap: parseOverlap('overlap', values.overlap) ?? ScheduleOverlapPolicy.SKIP,
    paused: values.paused === true,
  };
  if (values.column) definition.column = values.column;
  if (types) definition.signalTypes = types;
  if (subtypes) definition.signalSubtypes = subtypes;
  if (limit !== undefined) definition.limit = limit;
  const since = isoDate('since', values.since);
  if (since) definition.since = since;
  const maxCredits = positiveInt('max-credits', values.maxCredits);
  if (maxCredits !== undefined) definition.maxCredits = maxCredits;
  const concurrency = positiveInt('concurrency', values.concurrency);
  if (concurrency !== undefined) definition.concurrency = concurrency;
  if (values.lookback !== undefined) definition.lookbackMs = parseEvery('lookback', values.lookback);
  if (values.note) definition.note = values.note;
  return definition;
}

// ─── operations on the server ────────────────────────────────────────────────────────────────────────────────

/** The workflow input a schedule carries (task queues from the configuration of whoever creates it). */
export function pushInputOf(definition: PushScheduleDefinition, temporal: TemporalConfig): ScheduledPushInput {
  const { everyMs: _every, overlap: _overlap, paused: _paused, note: _note, ...push } = definition;
  return { ...push, taskQueue: temporal.taskQueue, apiTaskQueue: temporal.apiTaskQueue };
}

export async function createPushSchedule(
  client: Client,
  temporal: TemporalConfig,
  definition: PushScheduleDefinition,
): Promise<string> {
  const scheduleId = scheduleIdOf(definition.name);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: definition.everyMs }] },
      action: {
        type: 'startWorkflow',
        workflowType: scheduledPush,
        workflowId: scheduleId,
        taskQueue: temporal.taskQueue,
        args: [pushInputOf(definition, temporal)],
      },
      policies: { overlap: definition.overlap ?? ScheduleOverlapPolicy.SKIP },
      memo: { 'signal-kit': 'scheduled-push', name: definition.name },
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
  const description = await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).describe());
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
    lastRun: push ? await lastRunOf(push.output, name) : null,
  };
}

/** The push's last committed run; describe still answers when the output cannot be read (say so instead). */
async function lastRunOf(output: string, name: string): Promise<LastRunView | { unreadable: string } | null> {
  try {
    return (await readPushState(openStore(output), name)).lastRun ?? null;
  } catch (error) {
    return { unreadable: `${output}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The schedule's push definition (what every run of it is started with). */
async function pushOf(client: Client, name: string): Promise<ScheduledPushInput> {
  const description = await known(name, () => client.schedule.getHandle(scheduleIdOf(name)).describe());
  const push = (description.action.args as [ScheduledPushInput] | undefined)?.[0];
  if (!push) throw new UsageError(`schedule "${name}" carries no push definition`);
  return push;
}

/** Starts one run of the schedule's push outside its timing: now, as a full refresh, or for a past window. */
export async function startPushRun(
  client: Client,
  name: string,
  options: { fullRefresh?: boolean; window?: PushWindow; now?: Date },
): Promise<{ workflowId: string; result: () => Promise<PushResult> }> {
  const push = await pushOf(client, name);
  // To the millisecond: two runs started in the same second are two runs (a run id names its keys).
  const at = (options.now ?? new Date()).toISOString();
  const workflowId = options.window
    ? `${scheduleIdOf(name)}-${backfillRunId(options.window)}`
    : `${scheduleIdOf(name)}-run-${runIdOf(at)}`;
  const input: ScheduledPushInput = {
    ...push,
    runAt: at,
    ...(options.fullRefresh ? { fullRefresh: true } : {}),
    ...(options.window ? { window: options.window } : {}),
  };
  const handle = await client.workflow.start(scheduledPush, {
    workflowId,
    taskQueue: push.taskQueue ?? DEFAULT_TASK_QUEUE,
    args: [input],
  });
  return { workflowId, result: () => handle.result() };
}

/** A run's result as the command prints it, with the exit code of its status (a failed run's partial result too). */
async function waitForRun(result: () => Promise<PushResult>): Promise<WithExit> {
  try {
    const value = await result();
    return new WithExit(value, EXIT[value.status === 'running' ? 'failed' : value.status]);
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const details = (error.cause as { details?: unknown[] } | undefined)?.details?.[0];
    return new WithExit(details ?? { error: error.cause?.message ?? error.message }, EXIT.failed);
  }
}

/** What `schedule state` shows: the watermarks in summary (or per domain), the remembered signals, the last run. */
export async function pushState(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[]; all?: boolean },
): Promise<Record<string, unknown>> {
  const output = options.output ?? (await pushOf(client, name)).output;
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

/** Forgets watermarks (all, or of `domains`); refused while a run of the schedule is in progress. */
export async function resetPush(
  client: Client,
  name: string,
  options: { output?: string; domains?: string[] },
): Promise<Record<string, unknown>> {
  let output = options.output;
  try {
    const details = await describePushSchedule(client, name);
    if (details.running.length > 0) {
      throw new UsageError(`schedule "${name}" has a run in progress (${details.running.join(', ')}); wait or pause`);
    }
    output ??= details.push?.output;
  } catch (error) {
    if (!(error instanceof UsageError) || output === undefined || /in progress/.test(error.message)) throw error;
  }
  if (output === undefined) throw new UsageError(`--output is required: schedule "${name}" has no output`);
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

// ─── the command ─────────────────────────────────────────────────────────────────────────────────────────────

export interface ScheduleCommandDeps {
  /** A connected client (tests); otherwise one is connected from the environment and closed at the end. */
  client?: Client;
  temporal?: TemporalConfig;
  /** Where results go (default stdout). */
  print?: (text: string) => void;
}

/** `signal-kit schedule SUBCOMMAND [NAME] …`: one operation on the server, its answer printed as JSON. */
export async function runScheduleCommand(
  sub: string,
  name: string | undefined,
  flags: CreateFlags & ScheduleFlags,
  deps: ScheduleCommandDeps = {},
): Promise<number> {
  const print = deps.print ?? ((text: string) => console.log(text));
  const action = parseSubcommand(sub, name, flags);
  const temporal = deps.temporal ?? parseTemporalConfig();
  const client = deps.client ?? (await connectClient(temporal));
  try {
    const result = await action(client, temporal);
    if (result instanceof WithExit) {
      print(JSON.stringify(result.value, null, 2));
      return result.code;
    }
    print(JSON.stringify(result, null, 2));
    return 0;
  } finally {
    if (!deps.client) await client.connection.close();
  }
}

type Action = (client: Client, temporal: TemporalConfig) => Promise<unknown>;

/** What a subcommand printed and the exit code it chose (a run waited for exits like a job). */
class WithExit {
  readonly value: unknown;
  readonly code: number;
  constructor(value: unknown, code: number) {
    this.value = value;
    this.code = code;
  }
}

/** The flags of the subcommands other than `create`, as commander hands them over; each takes its own. */
export interface ScheduleFlags {
  note?: string;
  overlap?: string;
  from?: string;
  to?: string;
  wait?: boolean;
  fullRefresh?: boolean;
  domain?: string[];
  domains?: boolean;
  output?: string;
}

/**
 * A subcommand with its schedule name and flags (commander has checked which ones it takes), checked completely
 * before anything is sent to the server.
 */
export function parseSubcommand(
  sub: string,
  scheduleName: string | undefined,
  values: CreateFlags & ScheduleFlags = {},
): Action {
  if (sub === 'create') {
    const definition = parseCreate(values);
    return async (client, temporal) => {
      const scheduleId = await createPushSchedule(client, temporal, definition);
      return { name: definition.name, scheduleId, created: true, every: formatEvery(definition.everyMs) };
    };
  }
  if (sub === 'list') return (client) => listPushSchedules(client);
  const name = pushName(undefined, scheduleName, sub);
  switch (sub) {
    case 'describe':
      return (client) => describePushSchedule(client, name);
    case 'pause':
      return async (client) => {
        await pausePushSchedule(client, name, values.note);
        return { name, paused: true };
      };
    case 'unpause':
      return async (client) => {
        await unpausePushSchedule(client, name, values.note);
        return { name, paused: false };
      };
    case 'trigger': {
      const overlap = parseOverlap('overlap', values.overlap);
      return async (client) => {
        await triggerPushSchedule(client, name, overlap);
        return { name, triggered: true };
      };
    }
    case 'run': {
      return async (client) => {
        const started = await startPushRun(client, name, { fullRefresh: values.fullRefresh === true });
        if (values.wait) return waitForRun(started.result);
        return { name, workflowId: started.workflowId, fullRefresh: values.fullRefresh === true };
      };
    }
    case 'backfill': {
      const from = isoDate('from', required('from', values.from))!;
      const to = isoDate('to', required('to', values.to))!;
      if (Date.parse(to) <= Date.parse(from)) throw new UsageError('--to must be later than --from');
      return async (client) => {
        const started = await startPushRun(client, name, { window: { from, to } });
        if (values.wait) return waitForRun(started.result);
        return { name, backfill: { from, to }, workflowId: started.workflowId };
      };
    }
    case 'state': {
      const output = values.output === undefined ? undefined : locationUrl('output', values.output);
      return (client) =>
        pushState(client, name, {
          ...(output ? { output } : {}),
          ...(values.domain ? { domains: values.domain.map((d) => d.trim().toLowerCase()) } : {}),
          ...(values.domains ? { all: true } : {}),
        });
    }
    case 'reset': {
      const output = values.output === undefined ? undefined : locationUrl('output', values.output);
      return (client) =>
        resetPush(client, name, {
          ...(output ? { output } : {}),
          ...(values.domain ? { domains: values.domain.map((d) => d.trim().toLowerCase()) } : {}),
        });
    }
    case 'delete':
      return async (client) => {
        await deletePushSchedule(client, name);
        return { name, deleted: true };
      };
    default:
      throw new UsageError(`unknown subcommand "schedule ${sub}"`);
  }
}
