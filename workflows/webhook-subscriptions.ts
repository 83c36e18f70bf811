import { proxyActivities } from '@temporalio/workflow';
import type { ApiActivities } from '../activities/registry.ts';
import type { WebhookSubscriptionRequest } from '../activities/webhook-subscriptions.ts';
import { apiActivityOptions } from './activity-options.ts';
import { DEFAULT_API_TASK_QUEUE } from './constants.ts';

export interface ManageWebhooksInput {
  request: WebhookSubscriptionRequest;
  apiTaskQueue?: string;
}

/**
 * One `signal-kit webhooks` management call, made by a worker on the rate-limited API queue (with the worker's key),
 * so that the CLI never spends the account's rate budget outside the queue that shares it.
 */
export async function manageWebhooks(input: ManageWebhooksInput): Promise<Record<string, unknown>> {
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE, 5));
  return api.manageWebhookSubscription(input.request);
}
