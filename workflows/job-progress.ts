import { defineQuery } from '@temporalio/workflow';
import type { JobKind, JobStatus } from '../activities/jobs/types.ts';

export type { JobResult } from '../activities/jobs/types.ts';

export interface JobProgress {
  jobId: string;
  kind: JobKind;
  status: JobStatus | 'preparing' | 'finalizing' | 'submitting' | 'waiting' | 'downloading';
  batchesTotal: number;
  batchesDone: number;
  batchesFailed: number;
  rows: number;
  distinct: number;
  invalid: number;
  ok: number;
  not_found: number;
  error: number;
  credits: number;
}

export const progressQuery = defineQuery<JobProgress>('progress');
