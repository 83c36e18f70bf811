import { continueAsNew } from '@temporalio/workflow';
import type { EnrichOptions } from '../activities/jobs/enrich.ts';
import { type BatchJobInput, batchApiActivities, runBatchJob } from './batch-job.ts';
import { CREDITS_PER_SIGNAL, MAX_SIGNALS_PER_DOMAIN } from './constants.ts';
import type { JobResult } from './job-progress.ts';

export interface BulkEnrichInput extends BatchJobInput {
  /** Filters passed to the API for every domain. */
  options?: EnrichOptions;
  /** No batch is started that could take the job's credits over this; the job then ends `budget_exhausted`. */
  maxCredits?: number;
}

/** Domains per `POST /v1/companies/enrich/bulk` call (spec 4.2). */
export const ENRICH_BATCH_SIZE = 100;

/** Enriches every distinct domain of an input, 100 per API call, into `<output>/<jobId>/parts/`. */
export async function bulkEnrich(input: BulkEnrichInput): Promise<JobResult> {
  const api = batchApiActivities(input);
  const options = input.options ?? {};
  const perDomain = options.limit ?? MAX_SIGNALS_PER_DOMAIN;
  return runBatchJob(input, {
    kind: 'enrich',
    batchSize: ENRICH_BATCH_SIZE,
    options: { ...options },
    maxCredits: input.maxCredits,
    runBatch: (job, index, call) => api.enrichBatch.executeWithOptions(call, [{ job, index, options }]),
    runCappedBatch: (job, index, creditCap, call) =>
      api.enrichBatch.executeWithOptions(call, [{ job, index, options, creditCap }]),
    worstCaseCredits: (size) => size * perDomain * CREDITS_PER_SIGNAL,
    details: { options },
    continueAsNew: (carried) => continueAsNew<typeof bulkEnrich>({ ...input, carried }),
  });
}
