import type { JobRef } from './types.ts';

/** Where everything of a job lives, relative to the output store. Deterministic from job id and batch index. */
const pad = (index: number) => String(index).padStart(5, '0');

export const jobPrefix = (job: JobRef) => `${job.jobId}/`;
export const partExtension = (job: JobRef) => (job.compression === 'none' ? '.jsonl' : '.jsonl.gz');
export const partKey = (job: JobRef, index: number) => `${job.jobId}/parts/part-${pad(index)}${partExtension(job)}`;
export const invalidPartKey = (job: JobRef, index: number) =>
  `${job.jobId}/parts/invalid-${pad(index)}${partExtension(job)}`;
export const partsPrefix = (job: JobRef) => `${job.jobId}/parts/`;
export const batchKey = (job: JobRef, index: number) => `${job.jobId}/work/batch-${pad(index)}.jsonl`;
export const preparedKey = (job: JobRef) => `${job.jobId}/work/_prepared.json`;
export const exportStateKey = (job: JobRef) => `${job.jobId}/work/export.json`;
export const exportLinkKey = (job: JobRef) => `${job.jobId}/work/export-link.json`;
export const manifestKey = (job: JobRef) => `${job.jobId}/_manifest.json`;
