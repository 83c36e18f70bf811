/** The `signal-kit` CLI and worker as child processes, for drills, end-to-end tests and benchmarks. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type ServerProcess, startProcess } from '../devstack/process.ts';

export const repo = fileURLToPath(new URL('../', import.meta.url));
export const cliMain = join(repo, 'cli/main.ts');

export interface ChildWorker {
  readonly pid: number;
  readonly process: ServerProcess;
  /** SIGKILL to the worker's whole process group: a crash, nothing is drained. */
  kill(): Promise<void>;
  /** SIGTERM (the worker drains), SIGKILL after the grace period. */
  stop(graceMs?: number): Promise<void>;
  output(): string;
}

/**
 * Starts `node cli/main.ts worker` in its own process group (registered, so a test that dies leaves no worker
 * behind) and resolves once it polls: the worker prints its banner after both Temporal workers are created.
 */
export async function startChildWorker(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: { args?: string[]; tailLines?: number } = {},
): Promise<ChildWorker> {
  const proc = startProcess({
    name: 'signal-kit-worker',
    command: process.execPath,
    args: [cliMain, 'worker', ...(options.args ?? [])],
    cwd: repo,
    env,
    tailLines: options.tailLines ?? 200,
  });
  const deadline = Date.now() + timeoutMs;
  while (!proc.outputTail().includes('signal-kit worker: pid')) {
    if (proc.hasExited() || Date.now() > deadline) {
      await proc.kill();
      throw new Error(`the child worker did not start:\n${proc.outputTail()}`);
    }
    await sleep(20);
  }
  return {
    pid: proc.pid,
    process: proc,
    kill: () => proc.kill(),
    stop: (graceMs) => proc.stop(graceMs),
    output: () => proc.outputTail(),
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** True when the command had to be killed at the deadline (it hung). */
  timedOut: boolean;
  /** True when `until` held and the command was stopped there (SIGKILL), before its end. */
  stoppedAtEvent: boolean;
}

export interface CliRunOptions {
  timeoutMs?: number;
  /** Checked on every output chunk: once true, the command is killed and the run ends (an event, not a clock). */
  until?: (output: { stdout: string; stderr: string }) => boolean;
}

/**
 * Runs `node cli/main.ts ...args` to its end, or until `options.until` holds (SIGKILL, `stoppedAtEvent`), or to the
 * deadline (SIGKILL, `timedOut`).
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: number | CliRunOptions = {},
): Promise<CliResult> {
  const { timeoutMs = 60_000, until } = typeof options === 'number' ? { timeoutMs: options } : options;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliMain, ...args], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let stoppedAtEvent = false;
    const checkUntil = () => {
      if (until && !stoppedAtEvent && until({ stdout, stderr })) {
        stoppedAtEvent = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      checkUntil();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      checkUntil();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut, stoppedAtEvent });
    });
  });
}
