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

/**
 * The job's progress, read by `signal-kit status` and `--wait` (and by anyone: `temporal workflow query --type
 * progress --workflow-id <jobId>`).
 */
export const progressQuery = defineQuery<JobProgress>('progress');

/** One line of a job's progress for Temporal's web UI (its "current details"): where the job is and what it counted. */
export function progressDetails(p: JobProgress): string {
  const parts = [`**${p.status}**`];
  if (p.batchesTotal > 0) {
    const failed = p.batchesFailed > 0 ? ` (${p.batchesFailed} failed)` : '';
    parts.push(`batches ${p.batchesDone} of ${p.batchesTotal} done${failed}`);
  }
  if (p.rows > 0) parts.push(`${p.rows} rows, ${p.distinct} distinct, ${p.invalid} invalid`);
  parts.push(`ok ${p.ok}, not_found ${p.not_found}, error ${p.error}`, `${p.credits} credits`);
  return parts.join(' · ');
}

/** The one-line summary of a batch's activity in Temporal's web UI, instead of a bare activity name. */
export function batchSummary(
  job: { jobId: string; kind: string },
  index: number,
  batchSize: number,
  /** The prepared input, once known: the number of batches and of distinct items. */
  prepared?: { batches: number; distinct: number },
): string {
  const of = prepared ? ` of ${prepared.batches}` : '';
  const last = Math.min((index + 1) * batchSize, prepared?.distinct ?? Number.POSITIVE_INFINITY);
  return `${job.kind} batch ${index + 1}${of} (items ${index * batchSize + 1}–${last}) · job ${job.jobId}`;
}
