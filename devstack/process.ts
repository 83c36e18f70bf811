import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupAlive, RUN_ID_ENV, registerGroup, unregisterGroup } from './registry.ts';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  readonly name: string;
  /** Also the process group id: the server is the leader of its own group. */
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The first and the last lines the server printed (stdout and stderr interleaved), for error messages. */
  outputTail(): string;
  /** SIGTERM to the whole group, SIGKILL after the grace period; resolves when the group is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the whole group at once (a crash, for fault drills). */
  kill(): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  /** The server's temporary state, removed if the server is ever reaped as a leftover. */
  stateDir?: string;
  env?: NodeJS.ProcessEnv;
  tailLines?: number;
  /** Run as this user and group (the parent must be root): for servers that refuse to run as root. */
  uid?: number;
  gid?: number;
}

/** Spawned groups still running in this process: killed synchronously if the process exits without stopping them. */
const running = new Map<number, ChildProcess>();
const exitDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pgid of running.keys()) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
      unregisterGroup(pgid);
    }
    for (const dir of exitDirs) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // a dying server may still be writing into it
      }
    }
  });
}

/** Removes `dir` when this process exits (after its servers are killed); call the result to cancel. */
export function removeOnExit(dir: string): () => void {
  installExitHook();
  exitDirs.add(dir);
  return () => exitDirs.delete(dir);
}

export class ServerStartError extends Error {
  readonly server: string;
  readonly output: string;
  constructor(server: string, message: string, output: string, options?: { cause?: unknown }) {
    super(`${server}: ${message}${output ? `\n--- last output of ${server} ---\n${output}` : ''}`, options);
    this.name = 'ServerStartError';
    this.server = server;
    this.output = output;
  }
}

/**
 * A process's output as its first lines and its last `limit`: a server that dies says why at the top (a Go panic's
 * "bind: address already in use" is followed by a long stack trace), and what it was doing at the end.
 */
function lineBuffer(limit: number, headLimit = 20) {
  const head: string[] = [];
  const tail: string[] = [];
  let dropped = 0;
  let partial = '';
  return {
    push(chunk: Buffer) {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (head.length < headLimit) {
          head.push(line);
          continue;
        }
        tail.push(line);
        if (tail.length > limit) {
          tail.shift();
          dropped += 1;
        }
      }
      if (partial.length > 8192) partial = partial.slice(-8192);
    },
    text: () =>
      [...head, ...(dropped > 0 ? [`[… ${dropped} lines …]`] : []), ...tail, ...(partial ? [partial] : [])].join('\n'),
  };
}

export function startProcess(options: StartProcessOptions): ServerProcess {
  const { name, command, args } = options;
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
  const output = lineBuffer(options.tailLines ?? 60);
  child.stdout?.on('data', output.push);
  child.stderr?.on('data', output.push);

  let exitInfo: ExitInfo | null = null;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('error', (err) => {
      output.push(Buffer.from(`spawn error: ${err.message}\n`));
      exitInfo ??= { code: null, signal: null };
      resolve(exitInfo);
    });
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });

  const pid = child.pid;
  if (pid === undefined) {
    return {
      name,
      pid: -1,
      exited,
      hasExited: () => true,
      outputTail: output.text,
      stop: async () => {},
      kill: async () => {},
    };
  }

  installExitHook();
  running.set(pid, child);
  registerGroup({
    pgid: pid,
    name,
    command,
    ownerPid: process.pid,
    runId: process.env[RUN_ID_ENV] ?? null,
    startedAt: new Date().toISOString(),
    stateDir: options.stateDir,
  });
  // The servers must not keep a finished process alive; the exit hook cleans up whatever was not stopped.
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone
    }
  };

  const waitGroupGone = async (deadline: number) => {
    while (groupAlive(pid) && Date.now() < deadline) await sleep(25);
    return !groupAlive(pid);
  };

  const finish = () => {
    running.delete(pid);
    unregisterGroup(pid);
  };

  return {
    name,
    pid,
    exited,
    hasExited: () => exitInfo !== null,
    outputTail: output.text,
    async stop(graceMs = 5_000) {
      if (groupAlive(pid)) {
        signalGroup('SIGTERM');
        const gone = await waitGroupGone(Date.now() + graceMs);
        if (!gone) {
          signalGroup('SIGKILL');
          await waitGroupGone(Date.now() + 5_000);
        }
      }
      await exited;
      finish();
    },
    async kill() {
      signalGroup('SIGKILL');
      await waitGroupGone(Date.now() + 5_000);
      await exited;
      finish();
    },
  };
}

/**
 * Polls `check` until it succeeds. Fails fast with the server's output when the process exits, and with the
 * last check error and output at the deadline.
 */
export async function waitUntilReady(
  proc: ServerProcess,
  check: () => Promise<unknown>,
  options: { timeoutMs: number; what: string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (proc.hasExited()) {
      const info = await proc.exited;
      throw new ServerStartError(
        proc.name,
        `exited (code ${info.code}, signal ${info.signal}) before ${options.what} succeeded`,
        proc.outputTail(),
      );
    }
    try {
      await check();
      return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      throw new ServerStartError(
        proc.name,
        `not ready after ${options.timeoutMs} ms (${options.what} kept failing: ${reason})`,
        proc.outputTail(),
        { cause: lastError },
      );
    }
    await Promise.race([sleep(options.intervalMs ?? 100), proc.exited]);
  }
}

/** Starting on a port picked a moment earlier can lose a race with another process; try again on new ports. */
export async function retryOnPortClash<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      const clash = err instanceof ServerStartError && /address already in use|bind: /i.test(err.output);
      if (!clash || attempt >= attempts) throw err;
    }
  }
}

/** Waits until a just-started server answers `check` (see waitUntilReady); stops it when it never does. */
export async function readyOrStopped(
  proc: ServerProcess,
  check: () => Promise<unknown>,
  options: { timeoutMs: number; what: string },
): Promise<ServerProcess> {
  try {
    await waitUntilReady(proc, check, options);
  } catch (err) {
    await proc.stop(1_000);
    throw err;
  }
  return proc;
}

/** Starts a server's process and waits until it answers `check`; stops it when it never does. */
export function startUntilReady(
  options: StartProcessOptions,
  check: () => Promise<unknown>,
  wait: { timeoutMs: number; what: string },
): Promise<ServerProcess> {
  return readyOrStopped(startProcess(options), check, wait);
}

/** A server the dev stack runs: its current process, a restart on the same ports and state, and a stop. */
export interface ManagedServer {
  readonly process: () => ServerProcess;
  /** Stops the server (hard: SIGKILL, a crash) and starts it again on the same ports and state. */
  restart(options?: { hard?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs a server: `start` picks ports and launches it (again on a port clash), `relaunch` starts it again on the same
 * ports after a restart. A state directory the stack made (`owned`) is removed when the server stops or cannot start.
 */
export async function manageServer(
  start: () => Promise<ServerProcess>,
  relaunch: () => Promise<ServerProcess>,
  state: { dir: string; owned: boolean },
): Promise<ManagedServer> {
  const removeState = () => (state.owned ? rm(state.dir, { recursive: true, force: true }) : Promise.resolve());
  let current: ServerProcess;
  try {
    current = await retryOnPortClash(start);
  } catch (err) {
    await removeState();
    throw err;
  }
  return {
    process: () => current,
    async restart({ hard = false, downMs = 0 } = {}) {
      await (hard ? current.kill() : current.stop());
      if (downMs > 0) await sleep(downMs);
      current = await relaunch();
    },
    async stop() {
      await current.stop();
      await removeState();
    },
  };
}
