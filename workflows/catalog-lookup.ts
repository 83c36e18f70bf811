import { proxyActivities } from '@temporalio/workflow';
import type { CatalogAnswer, CatalogRequest } from '../activities/catalog.ts';
import type { ApiActivities } from '../activities/registry.ts';
import { apiActivityOptions } from './activity-options.ts';
import { DEFAULT_API_TASK_QUEUE } from './constants.ts';

export interface CatalogLookupInput {
  request: CatalogRequest;
  apiTaskQueue?: string;
}

/** One `signal-kit topics search` or `signal-types` call, made by a worker on the rate-limited API queue. */
export async function lookupCatalog(input: CatalogLookupInput): Promise<CatalogAnswer> {
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE, 5));
  return api.lookupCatalog(input.request);
}
