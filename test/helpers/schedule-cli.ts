/** `signal-kit schedule …` run in process against a test Temporal server, its printed JSON parsed. */
import type { Client } from '@temporalio/client';
import { runScheduleCommand } from '../../cli/commands/schedule.ts';
import { parseScheduleArgv } from '../../cli/program.ts';
import type { WorkerConfig } from '../../config/worker.ts';

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
