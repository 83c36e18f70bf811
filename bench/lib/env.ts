import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxOptions } from '../../sandbox/index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { ProcessWatch } from './proc.ts';

export interface BenchEnv {
  /** The dev stack (real Temporal dev server, S3 when asked), the sandbox in this process, the workflow bundle. */
  env: JobEnv;
  /** A scratch directory for inputs and outputs, removed by stop(). */
  dir: string;
  /** The Temporal server process, for its CPU time. */
  temporal: ProcessWatch;
  stop(): Promise<void>;
}

export interface BenchEnvOptions {
  sandbox?: SandboxOptions;
  s3?: boolean;
  /** Extra `temporal server start-dev` flags (dynamic config). */
  temporalArgs?: string[];
}

/** A sandbox with room for every benchmark: no rate limit unless asked, a balance that never runs out. */
export async function startBenchEnv(options: BenchEnvOptions): Promise<BenchEnv> {
  const sandbox: SandboxOptions = { rateLimitPerMinute: 0, credits: 1e15, ...options.sandbox };
  // A server of its own: a benchmark reads the server's CPU, and must not share it with tests running beside it.
  const env = await startJobEnv({
    sandbox,
    ownTemporal: true,
    s3: options.s3 ?? false,
    ...(options.temporalArgs ? { temporalArgs: options.temporalArgs } : {}),
  });
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-bench-'));
  const temporal = new ProcessWatch(env.stack.temporal!.process().pid, 1000);
  return {
    env,
    dir,
    temporal,
    async stop() {
      temporal.stop();
      await env.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Logs to stderr with the benchmark's name. */
export function logger(name: string, log?: (line: string) => void): (line: string) => void {
  return log ?? ((line) => process.stderr.write(`[bench ${name}] ${line}\n`));
}
