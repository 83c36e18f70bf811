import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { type ActivityDeps, createApiActivities, createMainQueueActivities } from '../activities/index.ts';
import { connectionOptions, reachTemporal } from '../config/temporal.ts';
import { SignalClient } from '../connectors/signal-api/client.ts';
import { openStore } from '../connectors/storage/index.ts';
import type { Store } from '../connectors/storage/store.ts';
import type { WebhookDeliveryConfig } from '../connectors/webhooks/destinations.ts';
import { createWebhookWorkerActivities, mergeActivities, parseWebhookDeliveryConfig } from './activities.ts';
import { ApiPermits } from './api-permits.ts';
import type { WorkerConfig } from './config.ts';
import { dataConverterFor } from './payload-codec.ts';

export interface WorkerHandle {
  /** Resolves when both workers have stopped. */
  readonly done: Promise<void>;
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
}

/** The worker's workflows entry, next to this file's compiled or source form. */
export function workflowsPath(): string {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../workflows/index.${extension}`, import.meta.url));
}

/** Opens each base URL once and reuses it (S3 and GCS clients hold connection pools). */
export function cachedStoreOpener(open: (url: string) => Store = openStore): (url: string) => Store {
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
 * limiter (workflows/api-rate-limiter.ts) so that any number of processes and jobs together stay under the budget.
 */
export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const { config } = options;
  const webhooks = options.webhooks ?? parseWebhookDeliveryConfig();
  const connection = await reachTemporal(config, () => NativeConnection.connect(connectionOptions(config)));
  const workflows = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : { workflowsPath: workflowsPath() };
  const dataConverter = dataConverterFor(config.payloadKeys);
  const encryption = dataConverter ? { dataConverter } : {};
  // Every process paces its API calls through one limiter workflow per API queue: the account's budget is shared.
  const permits = new ApiPermits({
    client: new Client({ connection, namespace: config.namespace, ...encryption }),
    taskQueue: config.taskQueue,
    apiTaskQueue: config.apiTaskQueue,
    perMinute: config.ratePerMinute,
  });
  const client =
    options.deps?.client ??
    new SignalClient({
      baseUrl: config.url,
      apiKey: config.apiKey,
      auth: config.auth,
      timeoutMs: config.timeoutMs,
      retry: false,
      beforeRequest: permits.acquire,
    });
  const deps: ActivityDeps = { client, openStore: options.deps?.openStore ?? cachedStoreOpener() };
  const main = await Worker.create({
    connection,
    namespace: config.namespace,
    ...encryption,
    taskQueue: config.taskQueue,
    ...workflows,
    activities: mergeActivities(
      createMainQueueActivities(deps),
      createWebhookWorkerActivities({ webhooks, openStore: deps.openStore }),
    ),
  });
  const api = await Worker.create({
    connection,
    namespace: config.namespace,
    ...encryption,
    taskQueue: config.apiTaskQueue,
    activities: createApiActivities(deps),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentApiActivities ?? 16,
  });
  const done = Promise.all([main.run(), api.run()]).then(async () => {
    await connection.close();
    if (!options.deps?.client) await client.close();
  });
  return {
    done,
    async shutdown() {
      for (const worker of [main, api]) if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
