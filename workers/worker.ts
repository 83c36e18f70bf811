import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { Agent } from 'undici';
import { PartSpool } from '../activities/paid/spool.ts';
import {
  type ActivityDeps,
  createApiActivities,
  createMainQueueActivities,
  mergeActivities,
} from '../activities/registry.ts';
import { ownSpoolDir } from '../config/spool.ts';
import { storeOpener } from '../config/storage.ts';
import { connectionOptions, reachTemporal } from '../config/temporal.ts';
import { parseWebhookDeliveryConfig } from '../config/webhooks.ts';
import { defaultSpoolDir, type WorkerConfig } from '../config/worker.ts';
import { ConfigError } from '../connectors/errors.ts';
import { SignalClient } from '../connectors/signal-api/client.ts';
import type { SendCheck } from '../connectors/signal-api/http.ts';
import type { Store } from '../connectors/storage/store.ts';
import type { WebhookDeliveryConfig } from '../connectors/webhooks/destinations.ts';
import { UNPACED_ABOVE_PER_MINUTE } from '../workflows/rate-limiter-schedule.ts';
import { activityFailureInterceptor } from './activity-failures.ts';
import { crmWritersFrom } from './crm-writers.ts';
import type { HealthCheck } from './health.ts';
import { type KitMetrics, meteredDispatcher, telemetryInterceptor } from './metrics.ts';
import { dataConverterFor } from './payload-codec.ts';
import { RateLimiterPermits } from './rate-limiter-permits.ts';
import { temporalAnswers } from './temporal-health.ts';

/** The API client's own pool settings (connectors/signal-api/http.ts), for the metered pool the worker builds. */
const API_POOL = { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 32 };

export interface WorkerHandle {
  /** Resolves when both workers have stopped. */
  readonly done: Promise<void>;
  /** Both workers poll, and Temporal answers a health check now: what `/readyz` reports. */
  readonly checks: Record<string, HealthCheck>;
  /**
   * Makes this worker's version the deployment's current one (new workflows start on it; pinned ones stay where
   * they started). Retries while the server has not registered the version yet.
   */
  makeCurrentVersion(timeoutMs?: number): Promise<void>;
  /** Stops polling, lets running activities finish, closes connections. */
  shutdown(): Promise<void>;
}

export interface StartWorkerOptions {
  config: WorkerConfig;
  /** A prebuilt workflow bundle (tests bundle once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Override activity dependencies (tests). */
  deps?: Partial<ActivityDeps>;
  /** Concurrent API activities on this worker (the rate limiter still caps the account). */
  maxConcurrentApiActivities?: number;
  /** Webhook destinations with their secrets; default: the `SIGNAL_KIT_WEBHOOK_*` variables. */
  webhooks?: WebhookDeliveryConfig;
  /** The kit's counters (from `installRuntime`); API answers and published batches are recorded in them. */
  metrics?: KitMetrics;
  /** Worker Deployment versioning of both workers (config/deployment.ts); off when absent. */
  versioning?: WorkerVersion;
  /** Activities of your own, registered on the main task queue beside the kit's (a name the kit uses is refused). */
  activities?: Record<string, (...args: never[]) => Promise<unknown>>;
}

export interface WorkerVersion {
  deploymentName: string;
  buildId: string;
  behavior: 'PINNED' | 'AUTO_UPGRADE';
}

/** The worker's workflows entry, next to this file's compiled or source form. */
export function workflowsPath(): string {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../workflows/index.${extension}`, import.meta.url));
}

/** The limiter's `acquire`, recording how long each call waited for its slot. */
function timedSlots(acquire: (signal?: AbortSignal) => Promise<SendCheck>, metrics: KitMetrics) {
  return async (signal?: AbortSignal) => {
    const started = performance.now();
    const onTime = await acquire(signal);
    metrics.slotWait(performance.now() - started);
    return onTime;
  };
}

/**
 * After SIGTERM, how long running activities may finish before they are cancelled and retried elsewhere
 * (`SIGNAL_KIT_SHUTDOWN_GRACE_MS`). Default: the API timeout plus 15 s, the longest an API batch runs (one bulk call,
 * then writing its part), so that a deploy never throws away an answer already paid for. Longer storage activities
 * (a large export download) are cancelled and resumed by another worker, which costs time, not credits.
 */
export function shutdownGraceMs(config: WorkerConfig): number {
  return config.shutdownGraceMs ?? config.timeoutMs + 15_000;
}

/** Opens each base URL once and reuses it (S3 and GCS clients hold connection pools). */
export function cachedStoreOpener(open: (url: string) => Store = storeOpener()): (url: string) => Store {
  const stores = new Map<string, Store>();
  return (url) => {
    let store = stores.get(url);
    if (!store) {
      store = open(url);
      stores.set(url, store);
    }
    return store;
  };
}

/**
 * Runs the two workers of a process: one on the main queue (workflows, storage activities, downloads, webhook
 * delivery and bucket collectors) and one on the API queue, whose calls wait for a slot from the account's rate
 * limiter (workflows/rate-limiter.ts) so that any number of processes and jobs together stay under the budget.
 */
export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const { config } = options;
  // Refused before anything connects: a spool another user can read or write (docs/security.md).
  const spool = options.deps?.spool ?? (await PartSpool.open(await ownSpoolDir(config.spoolDir ?? defaultSpoolDir())));
  const webhooks = options.webhooks ?? parseWebhookDeliveryConfig();
  const connection = await reachTemporal(config, () => NativeConnection.connect(connectionOptions(config)));
  const workflows = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : { workflowsPath: workflowsPath() };
  const dataConverter = dataConverterFor(config.payloadKeys, { allowPlaintext: config.allowPlaintextPayloads });
  const encryption = dataConverter ? { dataConverter } : {};
  // Every process paces its API calls through one limiter workflow per API queue: the account's budget is shared.
  const permits = new RateLimiterPermits({
    client: new Client({ connection, namespace: config.namespace, ...encryption }),
    taskQueue: config.taskQueue,
    apiTaskQueue: config.apiTaskQueue,
    perMinute: config.ratePerMinute,
    ...(config.rateWindowMs ? { windowMs: config.rateWindowMs } : {}),
  });
  // With metrics, the client's connection pool records every answer; the worker then closes that pool itself.
  const dispatcher = options.metrics && !options.deps?.client ? new Agent(API_POOL) : undefined;
  const client = options.deps?.client ?? signalClientFor(config, permits, dispatcher, options.metrics);
  const deps: ActivityDeps = {
    client,
    openStore: options.deps?.openStore ?? cachedStoreOpener(),
    spool,
    crmWriter: options.deps?.crmWriter ?? crmWritersFrom(),
  };
  const common = { connection, namespace: config.namespace, ...encryption, ...sharedWorkerOptions(options) };
  const main = await Worker.create({
    ...common,
    taskQueue: config.taskQueue,
    ...workflows,
    activities: mergeActivities(createMainQueueActivities({ ...deps, webhooks }), options.activities ?? {}),
  });
  const api = await Worker.create({
    ...common,
    taskQueue: config.apiTaskQueue,
    activities: createApiActivities(deps),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentApiActivities ?? 16,
  });
  const mainRun = main.run();
  const apiRun = api.run();
  if (config.ratePerMinute <= UNPACED_ABOVE_PER_MINUTE) void permits.warmUp();
  // A versioned worker moves a limiter pinned to an earlier build (one started before versioning was turned on, or
  // by an earlier release) to auto-upgrade, before that build's workers are gone. Failures are met by the first call.
  if (options.versioning) void permits.followRollouts().catch(() => {});
  const done = Promise.all([mainRun, apiRun]).then(async () => {
    await connection.close();
    if (!options.deps?.client) await client.close();
    await dispatcher?.close();
  });
  return {
    done,
    checks: healthChecks(config, main, api, connection),
    makeCurrentVersion: (timeoutMs = 60_000) => makeCurrentVersion(connection, config, options.versioning, timeoutMs),
    async shutdown() {
      // The API queue drains first: its running calls wait for slots from the rate limiter, a workflow that only the
      // main worker runs. Stopped together, a lone worker's calls waited for a limiter nobody served until the grace
      // period ran out.
      if (api.getState() === 'RUNNING') api.shutdown();
      await apiRun.catch(() => {});
      if (main.getState() === 'RUNNING') main.shutdown();
      await done;
    },
  };
}

/** The API client of the worker's calls: paced by the account's rate limiter, metered when metrics are on. */
function signalClientFor(
  config: WorkerConfig,
  permits: RateLimiterPermits,
  dispatcher: Agent | undefined,
  metrics: KitMetrics | undefined,
): SignalClient {
  return new SignalClient({
    baseUrl: config.url,
    apiKey: config.apiKey,
    auth: config.auth,
    timeoutMs: config.timeoutMs,
    retry: false,
    ...(config.ratePerMinute <= UNPACED_ABOVE_PER_MINUTE
      ? {
          beforeRequest: metrics ? timedSlots(permits.acquire, metrics) : permits.acquire,
          beforeParse: permits.beforeBusyWork,
        }
      : {}),
    ...(dispatcher && metrics ? { dispatcher: meteredDispatcher(metrics, dispatcher) } : {}),
  });
}

/** What both workers of a process share: interceptors, shutdown grace, versioning. */
function sharedWorkerOptions(options: StartWorkerOptions) {
  // Every activity heartbeats and reaches Temporal with its failure classified; then the telemetry, when asked for.
  const activity = [activityFailureInterceptor, ...(options.metrics ? [telemetryInterceptor(options.metrics)] : [])];
  const versioning = options.versioning
    ? {
        workerDeploymentOptions: {
          useWorkerVersioning: true as const,
          version: { deploymentName: options.versioning.deploymentName, buildId: options.versioning.buildId },
          defaultVersioningBehavior: options.versioning.behavior,
        },
      }
    : {};
  const graceMs = shutdownGraceMs(options.config);
  return {
    interceptors: { activity },
    shutdownGraceTime: graceMs,
    shutdownForceTime: graceMs + 15_000,
    ...versioning,
  };
}

/** The process's health: both workers running, Temporal answering. */
function healthChecks(
  config: WorkerConfig,
  main: Worker,
  api: Worker,
  connection: NativeConnection,
): Record<string, HealthCheck> {
  return {
    workers: async () => {
      const states = { [config.taskQueue]: main.getState(), [config.apiTaskQueue]: api.getState() };
      const summary = Object.entries(states)
        .map(([queue, state]) => `${queue} ${state}`)
        .join(', ');
      if (Object.values(states).some((state) => state !== 'RUNNING')) throw new Error(summary);
      return summary;
    },
    temporal: () => temporalAnswers(connection, config.address),
  };
}

/** Makes this worker's build the deployment's current version, once the server has seen its pollers. */
async function makeCurrentVersion(
  connection: NativeConnection,
  config: WorkerConfig,
  version: WorkerVersion | undefined,
  timeoutMs: number,
): Promise<void> {
  if (!version) throw new ConfigError('--make-current: set SIGNAL_KIT_DEPLOYMENT_NAME to version this worker');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await connection.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: config.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: `signal-kit worker ${process.pid}`,
      });
      return;
    } catch (error) {
      // The version exists server-side only once its pollers were seen; until then the call is refused.
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
