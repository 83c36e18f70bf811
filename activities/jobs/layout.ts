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

/** Whether `key` is one of the job's own `part-NNNNN` / `invalid-NNNNN` objects, directly in its parts folder. */
export function isOwnPartKey(job: JobRef, key: string): boolean {
  const prefix = partsPrefix(job);
  if (!key.startsWith(prefix)) return false;
  const name = key.slice(prefix.length);
  return /^(part|invalid)-\d{5,}$/.test(name.slice(0, -partExtension(job).length)) && name.endsWith(partExtension(job));
}
