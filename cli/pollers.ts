import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@temporalio/client';

// Enum values of temporal.api.enums.v1 (TaskQueueKind, TaskQueueType); @temporalio/proto is not a direct dependency.
const KIND_NORMAL = 1;
const TYPE_WORKFLOW = 1;
const TYPE_ACTIVITY = 2;

export interface Queues {
  taskQueue: string;
  apiTaskQueue: string;
}

/** How long `--wait` gives a worker that is just starting to show up before it says none is there. */
export const WORKER_GRACE_MS = 10_000;

/**
 * The task queues a job needs that no worker polls: the main queue for workflow tasks and the API queue for
 * activities. Temporal lists a poller for a few minutes after its last poll, so a worker that just died still counts.
 */
export async function queuesWithoutWorker(client: Client, namespace: string, queues: Queues): Promise<string[]> {
  const polled = async (name: string, type: number) => {
    const answer = await client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name, kind: KIND_NORMAL },
      taskQueueType: type,
    });
    return (answer.pollers?.length ?? 0) > 0;
  };
  const [main, api] = await Promise.all([
    polled(queues.taskQueue, TYPE_WORKFLOW),
    polled(queues.apiTaskQueue, TYPE_ACTIVITY),
  ]);
  return [...(main ? [] : [queues.taskQueue]), ...(api ? [] : [queues.apiTaskQueue])];
}

/** Like `queuesWithoutWorker`, asking again each second for up to `graceMs` until every queue has a worker. */
export async function awaitWorkers(
  client: Client,
  namespace: string,
  queues: Queues,
  graceMs = WORKER_GRACE_MS,
): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const missing = await queuesWithoutWorker(client, namespace, queues);
    if (missing.length === 0 || Date.now() >= deadline) return missing;
    await delay(1000);
  }
}

export function noWorkerMessage(missing: string[], namespace: string, address: string): string {
  const queues = missing.map((queue) => `"${queue}"`).join(' and ');
  return (
    `no worker polls task queue ${queues} in namespace "${namespace}" at ${address}: ` +
    'start one with `signal-kit worker` (same SIGNAL_KIT_TASK_QUEUE, SIGNAL_KIT_API_TASK_QUEUE and Temporal settings)'
  );
}
