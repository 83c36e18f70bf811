import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { ApiActivities, JobActivities } from '../activities/index.ts';
import { apiActivityOptions, storageActivityOptions } from './activity-options.ts';
import { type BatchJobInput, runBatchJob } from './batch-job.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from './constants.ts';
import type { JobResult } from './job-progress.ts';

export interface VerifyEmailsInput extends BatchJobInput {
  /** No chunk is started that could take the job's credits over this (1 credit per address at most). */
  maxCredits?: number;
}

/** Addresses per `POST /v1/emails/verify/bulk` call (spec 4.13). */
export const VERIFY_CHUNK_SIZE = 1000;

/** Verifies every distinct address of an input, 1,000 per API call, into `<output>/<jobId>/parts/`. */
export async function verifyEmails(input: VerifyEmailsInput): Promise<JobResult> {
  const jobs = proxyActivities<JobActivities>(storageActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE));
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE));
  return runBatchJob(input, {
    kind: 'verify-emails',
    batchSize: VERIFY_CHUNK_SIZE,
    maxCredits: input.maxCredits,
    prepare: (job) =>
      jobs.prepareInput({ job, input: input.input, column: input.column, batchSize: VERIFY_CHUNK_SIZE }),
    runBatch: (job, index) => api.verifyBatch({ job, index }),
    worstCaseCredits: (size) => size,
    details: {},
    continueAsNew: (carried) => continueAsNew<typeof verifyEmails>({ ...input, carried }),
  });
}
