import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { type SandboxOptions, startSandbox } from '../../sandbox/index.ts';
import { type JobEnv, startJobEnv } from '../../test/helpers/job-env.ts';
import { type DevStack, stackEnv, startTemporal } from '../../test/stack/index.ts';
import type { WorkerConfig } from '../../workers/config.ts';
import { workflowsPath } from '../../workers/worker.ts';
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
  /** Extra `temporal server start-dev` flags (dynamic config); Temporal only, no S3, when given. */
  temporalArgs?: string[];
}

/** A sandbox with room for every benchmark: no rate limit unless asked, a balance that never runs out. */
export async function startBenchEnv(options: BenchEnvOptions): Promise<BenchEnv> {
  const sandbox: SandboxOptions = { rateLimitPerMinute: 0, credits: 1e15, ...options.sandbox };
  const env = options.temporalArgs
    ? await startTemporalOnlyEnv(options.temporalArgs, sandbox)
    : await startJobEnv({ sandbox, s3: options.s3 ?? false });
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

/**
 * What `startJobEnv` gives (test/helpers/job-env.ts), for a Temporal dev server started with extra flags, which the
 * shared dev stack does not take: the same bundle, sandbox, client, worker configuration and child environment.
 */
async function startTemporalOnlyEnv(extraArgs: string[], sandboxOptions: SandboxOptions): Promise<JobEnv> {
  // No Runtime.install here: this process runs no worker (workers are child processes), and startJobEnv installs
  // the one runtime a process may have when a later benchmark needs it.
  const stateDir = await mkdtemp(join(tmpdir(), 'signal-kit-bench-temporal-'));
  const [temporal, bundle] = await Promise.all([
    startTemporal({ stateDir, extraArgs }),
    bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: new DefaultLogger('WARN') }),
  ]);
  const stack: DevStack = {
    stateDir,
    temporal,
    env: () => stackEnv({ temporal }),
    async stop() {
      await temporal.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
  const sandbox = await startSandbox(sandboxOptions);
  const bundlePath = join(stateDir, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle.code);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const queue = `q-${Math.random().toString(36).slice(2, 8)}`;
  const config = (overrides: Partial<WorkerConfig> = {}): WorkerConfig => ({
    address: temporal.address,
    namespace: temporal.namespace,
    temporalApiKey: undefined,
    taskQueue: `${queue}-main`,
    apiTaskQueue: `${queue}-api`,
    url: sandbox.url,
    apiKey: 'sk_test_1',
    auth: 'x-api-key',
    ratePerMinute: 6000,
    timeoutMs: 30_000,
    ...overrides,
  });
  return {
    stack,
    sandbox,
    bundle,
    bundlePath,
    client,
    config,
    childEnv(overrides = {}) {
      const c = config();
      return {
        ...(process.env as Record<string, string>),
        ...stack.env(),
        SIGNAL_API_URL: sandbox.url,
        SIGNAL_API_KEY: 'sk_test_1',
        SIGNAL_API_RATE_LIMIT: String(c.ratePerMinute),
        SIGNAL_KIT_TASK_QUEUE: c.taskQueue,
        SIGNAL_KIT_API_TASK_QUEUE: c.apiTaskQueue,
        SIGNAL_KIT_WORKFLOW_BUNDLE: bundlePath,
        ...overrides,
      };
    },
    startWorker: () => Promise.reject(new Error('benchmarks run their workers as processes')),
    createBuckets: () => Promise.reject(new Error('no S3 server in this environment')),
    async stop() {
      await connection.close();
      await sandbox.stop();
      await stack.stop();
    },
  };
}

/** Logs to stderr with the benchmark's name. */
export function logger(name: string, log?: (line: string) => void): (line: string) => void {
  return log ?? ((line) => process.stderr.write(`[bench ${name}] ${line}\n`));
}
