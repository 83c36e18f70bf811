import { type ScheduleSpec, type ScheduleSpecDescription, ServiceError } from '@temporalio/client';
import { UsageError } from '../../connectors/errors.ts';
import type { ScheduleTiming } from './kinds.ts';

// When a schedule runs, as the user said it (`--every`, `--at` with `--timezone`, `--cron`) and as Temporal's
// schedule spec holds it: an interval, a calendar (hour, minute, second of every day) or a cron expression, each in
// the time zone given (UTC by default). The user's words are kept in the schedule's memo, so `describe` shows them
// as given (Temporal answers a cron expression back as calendars).

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

/** A time of day as `--at` takes it: `HH:MM` or `HH:MM:SS`, 24-hour. */
const TIME_OF_DAY = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

/** `--at`'s value as hour, minute and second, or undefined when it is not a time of day. */
export function parseTimeOfDay(value: string): { hour: number; minute: number; second: number } | undefined {
  const match = TIME_OF_DAY.exec(value.trim());
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]), second: Number(match[3] ?? 0) };
}

/** Whether `zone` is an IANA time zone this runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The timing as Temporal's schedule spec. */
export function scheduleSpecOf(timing: ScheduleTiming): ScheduleSpec {
  const timezone = timing.timezone ? { timezone: timing.timezone } : {};
  if (timing.at !== undefined) {
    const time = parseTimeOfDay(timing.at);
    if (!time) throw new UsageError(`--at must be a time of day HH:MM or HH:MM:SS, got "${timing.at}"`);
    return { calendars: [{ hour: time.hour, minute: time.minute, second: time.second }], ...timezone };
  }
  if (timing.cron !== undefined) return { cronExpressions: [timing.cron], ...timezone };
  if (timing.everyMs === undefined) throw new UsageError('one of --every, --at or --cron is required');
  return { intervals: [{ every: timing.everyMs }] };
}

/** What a schedule's memo keeps of its timing: the user's words. */
export interface ScheduleTimingView {
  every?: string;
  at?: string;
  cron?: string;
  timezone?: string;
}

export function timingOf(timing: ScheduleTiming): ScheduleTimingView {
  return {
    ...(timing.everyMs !== undefined ? { every: formatEvery(timing.everyMs) } : {}),
    ...(timing.at !== undefined ? { at: timing.at } : {}),
    ...(timing.cron !== undefined ? { cron: timing.cron } : {}),
    ...(timing.at !== undefined || timing.cron !== undefined ? { timezone: timing.timezone ?? 'UTC' } : {}),
  };
}

/**
 * What `list` and `describe` show of a schedule's timing: the memo's words, or for a schedule created before the
 * memo kept them, its interval.
 */
export function timingView(memo: unknown, spec: ScheduleSpecDescription | undefined): ScheduleTimingView {
  if (memo && typeof memo === 'object') {
    const kept = memo as Record<string, unknown>;
    const view: ScheduleTimingView = {};
    for (const key of ['every', 'at', 'cron', 'timezone'] as const) {
      if (typeof kept[key] === 'string') view[key] = kept[key];
    }
    return view;
  }
  const every = spec?.intervals?.[0]?.every;
  return every !== undefined ? { every: formatEvery(Number(every)) } : {};
}

/** gRPC's INVALID_ARGUMENT: what the server answers a spec it cannot read with. */
const INVALID_ARGUMENT = 3;

/** A spec the server refused (a cron expression it cannot read): a usage error naming the flag. */
export function refusedSpec(error: unknown, timing: ScheduleTiming): unknown {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  if (!(error instanceof ServiceError) || code !== INVALID_ARGUMENT) return error;
  const flag = timing.cron !== undefined ? `--cron "${timing.cron}"` : timing.at !== undefined ? '--at' : '--every';
  return new UsageError(`${flag} was refused by Temporal: ${error.message}`);
}
