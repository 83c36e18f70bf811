import { continueAsNew, sleep } from '@temporalio/workflow';
import { type BatchJobInput, batchApiActivities, runBatchJob } from './batch-job.ts';
import type { JobResult } from './job-progress.ts';

export interface VerifyEmailsInput extends BatchJobInput {
  /** No chunk is started that could take the job's credits over this (1 credit per address at most). */
  maxCredits?: number;
  /**
   * Waits before each new try of the addresses whose upstream check failed (free, spec 8); addresses still failing
   * after the last one make the job `completed_with_errors`, and a re-run tries exactly them.
   */
  upstreamRetryDelaysMs?: number[];
}

/** About two and a half minutes of backoff for upstream failures, within the job. */
export const DEFAULT_UPSTREAM_RETRY_DELAYS_MS = [2_000, 10_000, 30_000, 90_000];

/** Addresses per `POST /v1/emails/verify/bulk` call (spec 4.13). */
export const VERIFY_CHUNK_SIZE = 1000;

/** Verifies every distinct address of an input, 1,000 per API call, into `<output>/<jobId>/parts/`. */
export async function verifyEmails(input: VerifyEmailsInput): Promise<JobResult> {
  const api = batchApiActivities(input);
  return runBatchJob(input, {
    kind: 'verify-emails',
    batchSize: VERIFY_CHUNK_SIZE,
    maxCredits: input.maxCredits,
    runBatch: async (job, index, call) => {
      let result = await api.verifyBatch.executeWithOptions(call, [{ job, index }]);
      for (const delay of input.upstreamRetryDelaysMs ?? DEFAULT_UPSTREAM_RETRY_DELAYS_MS) {
        if (!result.failed || (result.counts.retryable ?? 0) === 0) break;
        await sleep(delay);
        result = await api.verifyBatch.executeWithOptions(call, [{ job, index }]);
      }
      return result;
    },
    runCappedBatch: (job, index, creditCap, call) =>
      api.verifyBatch.executeWithOptions(call, [{ job, index, creditCap }]),
    worstCaseCredits: (size) => size,
    details: {},
    continueAsNew: (carried) => continueAsNew<typeof verifyEmails>({ ...input, carried }),
  });
}
