import { continueAsNew } from '@temporalio/workflow';
import type { EnrichOptions } from '../activities/jobs/enrich.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import { batchApiActivities, perItemSingles, runBatchJob, type SignalJobInput } from './batch-job.ts';
import type { JobResult } from './job-progress.ts';

export type BulkEnrichInput = SignalJobInput<EnrichOptions>;

/** Domains per `POST /v1/companies/enrich/bulk` call (spec 4.2). */
export const ENRICH_BATCH_SIZE = 100;

/**
 * Enriches every row of an input that names a company: distinct domains 100 per bulk call, rows named only by
 * LinkedIn URL or company name one single call each (first, so that the domains they resolve are paid once), into
 * `<output>/<jobId>/parts/`, one line per input row.
 */
export async function bulkEnrich(input: BulkEnrichInput): Promise<JobResult> {
  const api = batchApiActivities(input);
  const options = input.options ?? {};
  const perDomain = options.limit ?? MAX_SIGNALS_PER_CALL;
  return runBatchJob(input, {
    kind: 'enrich',
    batchSize: ENRICH_BATCH_SIZE,
    options: { ...options },
    maxCredits: input.maxCredits,
    runBatch: (job, index, call, folded) =>
      api.enrichBatch.executeWithOptions(call, [{ job, index, options, ...(folded ? { fold: true } : {}) }]),
    runCappedBatch: (job, index, creditCap, call, folded) =>
      api.enrichBatch.executeWithOptions(call, [{ job, index, options, creditCap, ...(folded ? { fold: true } : {}) }]),
    // Rows named only by LinkedIn URL or company name: one paced `POST /v1/companies/enrich` each.
    singles: perItemSingles(api.enrichSingleBatch, options),
    worstCaseCredits: (size) => size * perDomain * CREDITS.perEnrichedSignal,
    details: { options },
    continueAsNew: (carried) => continueAsNew<typeof bulkEnrich>({ ...input, carried }),
  });
}
