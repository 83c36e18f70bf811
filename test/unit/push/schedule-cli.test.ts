import { describe, expect, it } from 'vitest';
import {
  parseCreate as createFromFlags,
  parseEvery,
  parseOverlap,
  parseSubcommand as subcommandFromFlags,
} from '../../../cli/commands/schedule.ts';
import { parseScheduleArgv } from '../../../cli/program.ts';
import { formatEvery, SCHEDULE_KINDS, scheduleIdOf, scheduleInputOf } from '../../../library/schedules/service.ts';
import { scheduleSpecOf, timingOf } from '../../../library/schedules/timing.ts';
import { runIdOf } from '../../../workflows/scheduled-push.ts';

/** argv through the real command list (which flags each subcommand takes), then the command's own checks. */
const parseCreate = (argv: string[]) => createFromFlags(parseScheduleArgv(['create', ...argv]).flags);
const parseSubcommand = (sub: string, argv: string[]) => {
  const parsed = parseScheduleArgv([sub, ...argv]);
  return subcommandFromFlags(parsed.sub, parsed.name, parsed.flags);
};

const base = ['--name', 'crm', '--watchlist', 's3://b/watch.csv', '--output', 's3://b/out', '--every', '6h'];

describe('schedule command parsing', () => {
  it('reads durations and prints them back in the shortest form', () => {
    expect(parseEvery('every', '6h')).toBe(6 * 3_600_000);
    // Temporal's own duration strings (the `ms` format of its Duration), parsed by its parser.
    expect(parseEvery('every', '90m')).toBe(90 * 60_000);
    expect(parseEvery('every', '1.5h')).toBe(90 * 60_000);
    expect(parseEvery('every', '2 days')).toBe(2 * 86_400_000);
    expect(parseEvery('every', '1d')).toBe(86_400_000);
    expect(formatEvery(90 * 60_000)).toBe('90m');
    expect(formatEvery(86_400_000 + 1000)).toBe('86401s');
    for (const ms of [90 * 60_000, 86_401_000, 86_400_000, 1000]) expect(parseEvery('every', formatEvery(ms))).toBe(ms);
    for (const bad of ['6', 'h', '1h30m', '-1h', '0s', 'soon', ''])
      expect(() => parseEvery('every', bad)).toThrow(/--every/);
  });

  it('maps overlap names onto Temporal policies', () => {
    expect(parseOverlap('overlap', 'skip')).toBe('SKIP');
    expect(parseOverlap('overlap', 'buffer-all')).toBe('BUFFER_ALL');
    expect(parseOverlap('overlap', 'ALLOW_ALL')).toBe('ALLOW_ALL');
    expect(parseOverlap('overlap', undefined)).toBeUndefined();
    expect(() => parseOverlap('overlap', 'sometimes')).toThrow(/--overlap must be one of skip, buffer-one/);
  });

  it('builds a definition with SKIP by default, and a workflow input with the configured task queues', () => {
    const definition = parseCreate([
      ...base,
      '--signal-types',
      'news, sec-8k',
      '--limit',
      '50',
      '--since',
      '2026-01-01',
    ]);
    expect(definition).toEqual({
      name: 'crm',
      watchlist: 's3://b/watch.csv',
      output: 's3://b/out',
      everyMs: 6 * 3_600_000,
      overlap: 'SKIP',
      paused: false,
      signalTypes: ['news', 'sec-8k'],
      limit: 50,
      since: '2026-01-01T00:00:00.000Z',
    });
    const temporal = {
      address: 'x',
      namespace: 'default',
      temporalApiKey: undefined,
      taskQueue: 'q',
      apiTaskQueue: 'qa',
    };
    expect(scheduleInputOf(definition, temporal)).toEqual({
      name: 'crm',
      watchlist: 's3://b/watch.csv',
      output: 's3://b/out',
      signalTypes: ['news', 'sec-8k'],
      limit: 50,
      since: '2026-01-01T00:00:00.000Z',
      taskQueue: 'q',
      apiTaskQueue: 'qa',
    });
    expect(scheduleIdOf('crm')).toBe('signal-kit-push-crm');
    expect(scheduleIdOf('crm', SCHEDULE_KINDS.enrich)).toBe('signal-kit-sync-crm');
    expect(scheduleIdOf('crm', SCHEDULE_KINDS['enrich-contacts'])).toBe('signal-kit-sync-crm');
  });

  it('names the flag in every error, before anything reaches the server', () => {
    const without = (flag: string) => {
      const i = base.indexOf(flag);
      return [...base.slice(0, i), ...base.slice(i + 2)];
    };
    expect(() => parseCreate(without('--name'))).toThrow('--name is required');
    expect(() => parseCreate(without('--watchlist'))).toThrow('--watchlist is required');
    expect(() => parseCreate(without('--output'))).toThrow('--output is required');
    expect(() => parseCreate(without('--every'))).toThrow('--every, --at or --cron is required');
    expect(() => parseCreate([...base, '--name', 'Bad Name'])).toThrow(/--name must be lower-case/);
    expect(() => parseCreate([...base, '--watchlist', 's3://b/watch.xlsx'])).toThrow(/--watchlist must be a .csv/);
    expect(() => parseCreate([...base, '--output', 'http://x/y'])).toThrow(/--output must be a path/);
    expect(() => parseCreate([...base, '--limit', '501'])).toThrow(/--limit must be at most 500/);
    expect(() => parseCreate([...base, '--limit', '0'])).toThrow(/--limit must be a positive integer/);
    expect(() => parseCreate([...base, '--since', 'yesterday'])).toThrow(/--since must be an ISO 8601 date/);
    expect(() => parseCreate([...base, '--max-credits', 'x'])).toThrow(/--max-credits/);
    expect(() => parseCreate([...base, '--overlap', 'never'])).toThrow(/--overlap/);
    expect(() => parseCreate([...base, '--bogus', '1'])).toThrow(/bogus/);
    expect(() => parseSubcommand('pause', [])).toThrow('usage: signal-kit schedule pause NAME');
    expect(() => parseSubcommand('backfill', ['crm', '--to', '2026-03-02'])).toThrow('--from is required');
    expect(() => parseSubcommand('backfill', ['crm', '--from', '2026-03-02', '--to', '2026-03-01'])).toThrow(
      '--to must be later than --from',
    );
    expect(() => parseSubcommand('backfill', ['crm', '--from', 'soon', '--to', '2026-03-01'])).toThrow(
      /--from must be/,
    );
    expect(() => parseSubcommand('describe', ['crm', '--overlap', 'skip'])).toThrow(/unknown option '--overlap'/);
    expect(() =>
      parseSubcommand('backfill', ['crm', '--from', '2026-03-01', '--to', '2026-03-02', '--overlap', 'skip']),
    ).toThrow(/unknown option '--overlap'/);
    expect(() => parseSubcommand('reset', ['crm', '--full-refresh'])).toThrow(/unknown option '--full-refresh'/);
    expect(() => parseSubcommand('state', ['crm', '--wait'])).toThrow(/unknown option '--wait'/);
    expect(() => parseSubcommand('run', ['crm', '--domain', 'a.com'])).toThrow(/unknown option '--domain'/);
    expect(() => parseSubcommand('state', ['crm', '--output', 'ftp://x'])).toThrow(/--output must be a path/);
    for (const ok of [
      ['run', ['crm', '--full-refresh', '--wait']],
      ['state', ['crm', '--domain', 'a.com', '--domain', 'b.com', '--domains']],
      ['reset', ['crm', '--domain', 'a.com', '--output', 's3://b/out']],
    ] as const) {
      expect(() => parseSubcommand(ok[0], [...ok[1]])).not.toThrow();
    }
    expect(parseCreate([...base, '--lookback', '6h']).lookbackMs).toBe(6 * 3_600_000);
    expect(() => parseCreate([...base, '--lookback', 'soon'])).toThrow(/--lookback must be a duration/);
    expect(() => parseSubcommand('explode', ['crm'])).toThrow(/unknown subcommand "schedule explode"/);
  });
});

describe('run ids', () => {
  it('are the compact scheduled time, milliseconds only when present', () => {
    expect(runIdOf('2026-03-01T12:00:00.000Z')).toBe('20260301T120000Z');
    expect(runIdOf('2026-03-01T12:00:00.250Z')).toBe('20260301T120000.250Z');
  });
});

describe('schedule timing: --every, --at with --timezone, --cron (issue 36.7)', () => {
  const timed = (...flags: string[]) => parseCreate([...without('--every'), ...flags]);
  const without = (flag: string) => {
    const i = base.indexOf(flag);
    return [...base.slice(0, i), ...base.slice(i + 2)];
  };

  it('takes a time of day in a time zone, or a cron expression, as Temporal calendar specs', () => {
    const at = timed('--at', '02:30', '--timezone', 'Europe/Berlin');
    expect(at).toMatchObject({ at: '02:30', timezone: 'Europe/Berlin' });
    expect(scheduleSpecOf(at)).toEqual({
      calendars: [{ hour: 2, minute: 30, second: 0 }],
      timezone: 'Europe/Berlin',
    });
    expect(timingOf(at)).toEqual({ at: '02:30', timezone: 'Europe/Berlin' });
    const cron = timed('--cron', '30 2 * * 1-5');
    expect(scheduleSpecOf(cron)).toEqual({ cronExpressions: ['30 2 * * 1-5'] });
    expect(timingOf(cron)).toEqual({ cron: '30 2 * * 1-5', timezone: 'UTC' });
    expect(scheduleSpecOf(parseCreate(base))).toEqual({ intervals: [{ every: 6 * 3_600_000 }] });
  });

  it('refuses a timing it cannot read, naming the flag', () => {
    expect(() => timed('--at', '2:30pm')).toThrow(/--at must be a time of day/);
    expect(() => timed('--at', '24:00')).toThrow(/--at must be a time of day/);
    expect(() => timed('--at', '02:30', '--timezone', 'Mars/Olympus')).toThrow(/--timezone must be an IANA/);
    expect(() => timed('--cron', '30 2 *')).toThrow(/--cron must have 5 fields/);
    expect(() => parseCreate([...base, '--at', '02:30'])).toThrow(/only one of --every, --at or --cron/);
    expect(() => parseCreate([...base, '--timezone', 'UTC'])).toThrow(/--timezone applies to --at and --cron/);
  });
});
