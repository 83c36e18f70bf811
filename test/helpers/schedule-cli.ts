/** `signal-kit schedule …` run in process against a test Temporal server, its printed JSON parsed. */
import type { Client } from '@temporalio/client';
import { beforeAll } from 'vitest';
import { runScheduleCommand } from '../../cli/commands/schedule.ts';
import { parseScheduleArgv } from '../../cli/program.ts';
import type { WorkerConfig } from '../../config/worker.ts';
import { type JobEnvWithDir, useJobEnv } from './job-env.ts';

export interface ScheduleCliResult<T> {
  code: number;
  out: T;
}

/** Runs `signal-kit schedule ...argv`; returns the exit code and the parsed output. */
export async function runScheduleCli<T = unknown>(
  deps: { client: Client; temporal: WorkerConfig },
  argv: string[],
): Promise<ScheduleCliResult<T>> {
  const printed: string[] = [];
  const { sub, name, flags } = parseScheduleArgv(argv);
  const code = await runScheduleCommand(sub, name, flags, { ...deps, print: (t) => printed.push(t) });
  return { code, out: JSON.parse(printed.join('\n')) as T };
}

/** The sandbox's clock in the schedule tests: the schedules' times are computed from it. */
export const SCHEDULE_NOW = Date.UTC(2026, 2, 1, 6);

/**
 * For the enclosing describe block: a job env (sandbox seed 5, its clock stopped at SCHEDULE_NOW) with a worker and a
 * scratch dir, and `signal-kit schedule …` run against it.
 */
export function useScheduleEnv(label: string): {
  ctx: JobEnvWithDir;
  cli: <T = unknown>(...argv: string[]) => Promise<ScheduleCliResult<T>>;
  createNightly: <T = unknown>(name: string, nightly: NightlyOptions) => Promise<ScheduleCliResult<T>>;
} {
  const ctx = useJobEnv(label, { sandbox: { seed: 5, clock: () => SCHEDULE_NOW } });
  beforeAll(async () => {
    await ctx.env.startWorker();
  });
  const cli = <T = unknown>(...argv: string[]) =>
    runScheduleCli<T>({ client: ctx.env.client, temporal: ctx.env.config() }, argv);
  const createNightly = <T = unknown>(name: string, nightly: NightlyOptions) =>
    cli<T>(...nightlyCreateArgv(name, nightly));
  return { ctx, cli, createNightly };
}

export interface NightlyOptions {
  input: string;
  output: string;
  /** When it runs; a paused daily schedule (nights started by `schedule run`) unless given. */
  timing?: string[];
  /** Any further `schedule create` flags. */
  flags?: string[];
}

/** The argv of `schedule create` for a nightly CRM sync (`--kind enrich`) of `input` into `output`. */
function nightlyCreateArgv(name: string, nightly: NightlyOptions): string[] {
  const timing = nightly.timing ?? ['--every', '1d', '--paused'];
  return [
    'create',
    '--name',
    name,
    '--kind',
    'enrich',
    '--input',
    nightly.input,
    '--output',
    nightly.output,
    ...timing,
    ...(nightly.flags ?? []),
  ];
}
