/** The CLI as a user runs it: `node cli/main.ts …` in a child process. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const cliMain = join(repoRoot, 'cli/main.ts');
const execFileAsync = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  cwd: string;
  env: Record<string, string>;
  timeout: number;
  maxBuffer?: number;
}

/**
 * Runs the CLI to its exit; a non-zero exit is a result. A failure without an exit code (not started, killed by the
 * timeout) is thrown with `noExitCode: 'throw'`, or reported as code -1 with `'minus-one'`.
 */
export function runCli(args: string[], options: CliRunOptions, noExitCode: 'throw' | 'minus-one'): Promise<CliResult> {
  return runProgram(process.execPath, [cliMain, ...args], options, noExitCode);
}

/** Runs any program to its exit, with runCli's rules for exit codes. */
export async function runProgram(
  file: string,
  args: string[],
  options: Partial<CliRunOptions>,
  noExitCode: 'throw' | 'minus-one',
): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileAsync(file, args, options);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number' && noExitCode === 'throw') throw error;
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
