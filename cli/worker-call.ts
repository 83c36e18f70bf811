import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TemporalConfig } from '../config/worker.ts';
import { NoWorkerError } from '../connectors/errors.ts';
import { noWorkerMessage, queuesWithoutWorker } from './pollers.ts';

// A one-call command (`webhooks list`, `topics search`, `signal-types`) runs as a short workflow whose activity makes
// the call on the rate-limited API queue with the worker's key: the CLI itself never holds the key nor spends the
// account's rate budget outside the queue that shares it.

/** How long a one-call command waits for a worker to take its call before saying that none is running. */
export const WORKER_WAIT_MS = 30_000;

/**
 * Starts `workflow` with `args` on the main task queue (id `<idPrefix>-<uuid>`) and returns its result, once a
 * worker polls both queues. A call no worker takes within WORKER_WAIT_MS is terminated and a `NoWorkerError`.
 */
export async function runThroughWorker<A, R>(
  client: Client,
  temporal: TemporalConfig,
  workflow: (input: A) => Promise<R>,
  idPrefix: string,
  input: A,
): Promise<R> {
  const missing = await queuesWithoutWorker(client, temporal.namespace, temporal);
  if (missing.length > 0) throw new NoWorkerError(noWorkerMessage(missing, temporal.namespace, temporal.address));
  const handle = await client.workflow.start(workflow, {
    workflowId: `${idPrefix}-${randomUUID()}`,
    taskQueue: temporal.taskQueue,
    args: [input],
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'none'>((resolve) => {
    timer = setTimeout(() => resolve('none'), WORKER_WAIT_MS);
    timer.unref();
  });
  const result = await Promise.race([handle.result(), waited]).finally(() => clearTimeout(timer));
  if (result === 'none') {
    await handle.terminate('no worker took the call').catch(() => undefined);
    throw new NoWorkerError(noWorkerMessage([temporal.apiTaskQueue], temporal.namespace, temporal.address));
  }
  return result;
}
