import { type Client, ScheduleOverlapPolicy, WorkflowFailedError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { PUSH_NAME } from '../../activities/push/layout.ts';
import type { PushResult } from '../../activities/push/types.ts';
import { parseTemporalConfig, type TemporalConfig } from '../../config/worker.ts';
import { isoDate, locationUrl, positiveInt, required, signalFilters, UsageError } from '../args.ts';
import { EXIT, exitCodeOf } from '../job-service.ts';
import {
  createPushSchedule,
  deletePushSchedule,
  describePushSchedule,
  formatEvery,
  listPushSchedules,
  type PushScheduleDefinition,
  pausePushSchedule,
  pushState,
  resetPush,
  startPushRun,
  triggerPushSchedule,
  unpausePushSchedule,
} from '../push-schedules.ts';
import { connectClient } from '../temporal.ts';
import { tableFormats } from './job-commands.ts';

// `signal-kit schedule …`: flags in, one operation of the push schedules service (cli/push-schedules.ts), JSON out.
// A schedule `signal-kit-push-<name>` starts the `scheduledPush` workflow every `--every`; each run fetches only the
// signals after each domain's watermark.

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
  format?: string;
}

/** `schedule create`'s flags as the schedule to create; every mistake is a `UsageError` naming its flag. */
export function parseCreate(values: CreateFlags): PushScheduleDefinition {
  const { limit, types, subtypes } = signalFilters(values);
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
  const { formats } = tableFormats(values.format);
  if (formats) definition.formats = formats;
  return definition;
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
    let code = 0;
    const result = await action(client, temporal, (exitCode) => {
      code = exitCode;
    });
    print(JSON.stringify(result, null, 2));
    return code;
  } finally {
    if (!deps.client) await client.connection.close();
  }
}

/** A subcommand: what it prints; `exit` sets the exit code when it is not 0 (a run waited for exits like a job). */
type Action = (client: Client, temporal: TemporalConfig, exit: (code: number) => void) => Promise<unknown>;

/** A run's result as the command prints it (a failed run's partial result too), exiting with its status's code. */
async function waitForRun(result: () => Promise<PushResult>, exit: (code: number) => void): Promise<unknown> {
  try {
    const value = await result();
    exit(exitCodeOf(value));
    return value;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    exit(EXIT.failed);
    const details = (error.cause as { details?: unknown[] } | undefined)?.details?.[0];
    return details ?? { error: error.cause?.message ?? error.message };
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

/** Which watermarks `state` and `reset` look at: `--output` (checked) and the `--domain`s, normalized. */
function watermarkTarget(values: ScheduleFlags): { output?: string; domains?: string[] } {
  const output = values.output === undefined ? undefined : locationUrl('output', values.output);
  return {
    ...(output ? { output } : {}),
    ...(values.domain ? { domains: values.domain.map((d) => d.trim().toLowerCase()) } : {}),
  };
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
      return async (client, _temporal, exit) => {
        const started = await startPushRun(client, name, { fullRefresh: values.fullRefresh === true });
        if (values.wait) return waitForRun(started.result, exit);
        return { name, workflowId: started.workflowId, fullRefresh: values.fullRefresh === true };
      };
    }
    case 'backfill': {
      const from = isoDate('from', required('from', values.from))!;
      const to = isoDate('to', required('to', values.to))!;
      if (Date.parse(to) <= Date.parse(from)) throw new UsageError('--to must be later than --from');
      return async (client, _temporal, exit) => {
        const started = await startPushRun(client, name, { window: { from, to } });
        if (values.wait) return waitForRun(started.result, exit);
        return { name, backfill: { from, to }, workflowId: started.workflowId };
      };
    }
    case 'state': {
      const target = watermarkTarget(values);
      return (client) => pushState(client, name, { ...target, ...(values.domains ? { all: true } : {}) });
    }
    case 'reset': {
      const target = watermarkTarget(values);
      return (client) => resetPush(client, name, target);
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
