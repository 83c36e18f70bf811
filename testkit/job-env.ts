import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { parseStorageSettings } from '../config/storage.ts';
import type { WorkerConfig } from '../config/worker.ts';
import { gcsStorage } from '../connectors/storage/gcs.ts';
import { type DevStack, s3ClientFor, startDevStack } from '../devstack/index.ts';
import { type SandboxOptions, startSandbox } from '../sandbox/index.ts';
import { startWorker, type WorkerHandle } from '../workers/worker.ts';
import { openSharedNamespace, sharedTemporalAddress, withTemporal } from './shared-temporal.ts';
import { createSmokeActivities } from './smoke-activities.ts';

export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/** Everything a job test needs: the real servers, the sandbox API, one workflow bundle and a Temporal client. */
export interface JobEnv {
  stack: DevStack;
  sandbox: Sandbox;
  bundle: WorkflowBundleWithSourceMap;
  /** The bundle written to a file, for workers in child processes (SIGNAL_KIT_WORKFLOW_BUNDLE). */
  bundlePath: string;
  client: Client;
  config(overrides?: Partial<WorkerConfig>): WorkerConfig;
  /** Environment for a `signal-kit` child process pointed at this stack and sandbox. */
  childEnv(overrides?: Record<string, string>): Record<string, string>;
  startWorker(overrides?: Partial<WorkerConfig>): Promise<WorkerHandle>;
  /** A fresh bucket on both the S3 server and the GCS emulator. */
  createBuckets(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A bundle of this checkout's workflows already built for the whole run (the test suite's global setup writes one), so
 * that every stack does not bundle the same code again; absent, each stack bundles its own.
 */
/** The workflows of every job environment's bundle: the kit's and the smoke workflow (testkit/workflows.ts). */
export const TESTKIT_WORKFLOWS = fileURLToPath(new URL('./workflows.ts', import.meta.url));

export const PREBUILT_BUNDLE_ENV = 'SIGNAL_KIT_DEVSTACK_WORKFLOW_BUNDLE';

async function workflowBundle(): Promise<{ bundle: WorkflowBundleWithSourceMap; path?: string }> {
  const path = process.env[PREBUILT_BUNDLE_ENV];
  if (path) return { bundle: { code: await readFile(path, 'utf8'), sourceMap: '' }, path };
  return { bundle: await bundleWorkflowCode({ workflowsPath: TESTKIT_WORKFLOWS, logger: new DefaultLogger('WARN') }) };
}

let runtimeInstalled = false;

export interface JobEnvOptions {
  sandbox?: SandboxOptions;
  s3?: boolean;
  gcs?: boolean;
  /** Extra `temporal server start-dev` flags; implies a Temporal server of the environment's own. */
  temporalArgs?: string[];
  /**
   * A Temporal server of the environment's own, for tests that stop, restart or inspect it. Otherwise, when the test
   * run shares a server (SIGNAL_KIT_DEVSTACK_SHARED_TEMPORAL), the environment gets a namespace of its own there.
   */
  ownTemporal?: boolean;
}

async function startStack(options: JobEnvOptions): Promise<DevStack> {
  const services = { s3: options.s3 ?? false, gcs: options.gcs ?? false };
  const shared = options.ownTemporal || options.temporalArgs ? undefined : sharedTemporalAddress();
  if (!shared) {
    return startDevStack({
      temporal: true,
      ...services,
      ...(options.temporalArgs ? { temporalArgs: options.temporalArgs } : {}),
    });
  }
  const [stack, temporal] = await Promise.allSettled([
    startDevStack({ temporal: false, ...services }),
    openSharedNamespace(shared),
  ]);
  if (stack.status === 'fulfilled' && temporal.status === 'fulfilled') return withTemporal(stack.value, temporal.value);
  if (stack.status === 'fulfilled') await stack.value.stop().catch(() => {});
  if (temporal.status === 'fulfilled') await temporal.value.stop().catch(() => {});
  throw stack.status === 'rejected' ? stack.reason : (temporal as PromiseRejectedResult).reason;
}

export async function startJobEnv(options: JobEnvOptions = {}): Promise<JobEnv> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const [stack, { bundle, path: prebuiltPath }] = await Promise.all([startStack(options), workflowBundle()]);
  // In-process workers open s3:// and gs:// stores from the standard variables, as a deployed worker would.
  Object.assign(process.env, stack.env());
  const sandbox = await startSandbox({ rateLimitPerMinute: 0, ...options.sandbox });
  const bundlePath = prebuiltPath ?? join(stack.stateDir, 'workflow-bundle.js');
  if (!prebuiltPath) await writeFile(bundlePath, bundle.code);
  const temporal = stack.temporal!;
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const workers: WorkerHandle[] = [];
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
    async startWorker(overrides) {
      const worker = await startWorker({
        config: config(overrides),
        workflowBundle: bundle,
        activities: { ...createSmokeActivities() },
      });
      workers.push(worker);
      return worker;
    },
    async createBuckets(name) {
      if (stack.s3) await s3ClientFor(stack.s3).send(new CreateBucketCommand({ Bucket: name }));
      if (stack.gcs) await gcsStorage(parseStorageSettings().gcs).createBucket(name);
    },
    async stop() {
      await Promise.allSettled(workers.map((worker) => worker.shutdown()));
      await connection.close();
      await sandbox.stop();
      await stack.stop();
    },
  };
}
