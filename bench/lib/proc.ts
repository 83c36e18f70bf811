/**
 * Child processes of a benchmark (workers, baseline scripts) and what the kernel says about them: peak resident
 * memory (`VmHWM` in /proc/<pid>/status, the high-water mark) and CPU time (utime + stime in /proc/<pid>/stat).
 * Children run in their own process group through the dev stack's `startProcess`, so a benchmark that dies leaves
 * nothing behind (the next start reaps them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WORKER_NODE_OPTIONS } from '../../config/worker.ts';
import { type ServerProcess, startProcess } from '../../devstack/process.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const cliMain = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on every Linux this runs on). */
const USER_HZ = 100;

/** Peak and current resident memory of a live process, in KiB (undefined once it has exited). */
export function memoryOf(pid: number): { peakKb: number; rssKb: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const peakKb = field('VmHWM');
  const rssKb = field('VmRSS');
  return peakKb === undefined || rssKb === undefined ? undefined : { peakKb, rssKb };
}

/** CPU seconds (user + system) a live process has used so far. */
export function cpuSecondsOf(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: fields are counted after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / USER_HZ : undefined;
}

/**
 * CPU seconds (user + system) of a server process and its children so far: the live ones, and (through the server's
 * cutime and cstime) those it has already reaped, such as PostgreSQL's per-connection backends (which leave the
 * server's process group, so a group would miss them).
 */
export function serverCpuSeconds(pid: number): number {
  let total = 0;
  let names: string[] = [];
  try {
    names = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const name of names) {
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const own = Number(name) === pid;
    if (!own && Number(fields[1]) !== pid) continue;
    total += Number(fields[11]) + Number(fields[12]);
    if (own) total += Number(fields[13]) + Number(fields[14]);
  }
  return total / USER_HZ;
}

/** CPU seconds of this process (the benchmark driver, which also hosts the sandbox). */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/**
 * Follows a process: its peak memory is read every `intervalMs` (VmHWM only grows, so the last reading before the
 * process ends is its peak), its CPU time on demand.
 */
export class ProcessWatch {
  readonly pid: number;
  peakKb = 0;
  private cpuAtMark = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(pid: number, intervalMs = 250) {
    this.pid = pid;
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    this.sample();
    this.mark();
  }

  sample(): void {
    const memory = memoryOf(this.pid);
    if (memory) this.peakKb = Math.max(this.peakKb, memory.peakKb);
  }

  /** Starts a CPU measurement window. */
  mark(): void {
    this.cpuAtMark = cpuSecondsOf(this.pid) ?? this.cpuAtMark;
  }

  /** CPU seconds since the last `mark()`. */
  cpuSinceMark(): number {
    const now = cpuSecondsOf(this.pid);
    return now === undefined ? 0 : now - this.cpuAtMark;
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

export interface NodeChild {
  proc: ServerProcess;
  watch: ProcessWatch;
  /** Stops the process (SIGTERM, then SIGKILL) after reading its peak memory one last time. */
  stop(): Promise<{ peakKb: number }>;
}

/** Starts `node <args>` in its own process group, watched. */
export function startNode(name: string, args: string[], env: NodeJS.ProcessEnv): NodeChild {
  // `bench/run.ts --profile DIR`: every child writes a V8 CPU profile there when it exits.
  const profileDir = process.env['SIGNAL_KIT_BENCH_PROFILE_DIR'];
  const profiled = profileDir
    ? { ...env, NODE_OPTIONS: `${env['NODE_OPTIONS'] ?? ''} --cpu-prof --cpu-prof-dir=${profileDir}`.trim() }
    : env;
  const proc = startProcess({ name, command: process.execPath, args, cwd: repoRoot, env: profiled, tailLines: 200 });
  const watch = new ProcessWatch(proc.pid);
  return {
    proc,
    watch,
    async stop() {
      watch.stop();
      await proc.stop(30_000);
      return { peakKb: watch.peakKb };
    },
  };
}

/**
 * Starts `node cli/main.ts worker` (the worker as deployed, from source on Node 24) and resolves once it polls.
 * `env` is a complete environment (JobEnv.childEnv()).
 */
export async function startWorkerProcess(
  name: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 90_000,
): Promise<NodeChild & { idleKb: number }> {
  // Started the way README tells a deployment to start it (the recommended V8 flags in NODE_OPTIONS).
  const nodeOptions = `${env['NODE_OPTIONS'] ?? ''} ${WORKER_NODE_OPTIONS}`.trim();
  const child = startNode(name, [cliMain, 'worker'], {
    ...env,
    NODE_OPTIONS: nodeOptions,
    SIGNAL_KIT_LOG_LEVEL: 'WARN',
  });
  const deadline = Date.now() + timeoutMs;
  while (!/signal-kit worker: pid \d+/.test(child.proc.outputTail())) {
    if (child.proc.hasExited()) {
      const info = await child.proc.exited;
      throw new Error(`${name} exited (code ${info.code}) before it polled:\n${child.proc.outputTail()}`);
    }
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`${name} did not start within ${timeoutMs} ms:\n${child.proc.outputTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Idle: polling, nothing run yet; the resident set then, not the start-up's high-water mark.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  child.watch.sample();
  return Object.assign(child, { idleKb: memoryOf(child.proc.pid)?.rssKb ?? child.watch.peakKb });
}

/** Runs `node <script> <args>` to its end (bounded), returning its exit code and the peak memory seen. */
export async function runNodeScript(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; peakKb: number; wallMs: number }> {
  const started = performance.now();
  const child = startNode(name, args, env);
  const timer = setTimeout(() => void child.proc.stop(1_000), timeoutMs);
  const info = await child.proc.exited;
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  child.watch.stop();
  await child.proc.stop();
  return { code: info.code, output: child.proc.outputTail(), peakKb: child.watch.peakKb, wallMs };
}
