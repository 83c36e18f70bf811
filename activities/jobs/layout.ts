import type { TableName } from '../../contract/tables/columns.ts';
import { type OutputFormat, tableExtension } from '../tables/formats.ts';
import type { JobRef } from './types.ts';

/** Where everything of a job lives, relative to the output store. Deterministic from job id and batch index. */
const pad = (index: number) => String(index).padStart(5, '0');

export const jobPrefix = (job: JobRef) => `${job.jobId}/`;
/** Everything a job keeps only while it runs (batch files, call markers, export state); removed once it completed. */
export const workPrefix = (job: JobRef) => `${job.jobId}/work/`;
export const partExtension = (job: JobRef) => (job.compression === 'none' ? '.jsonl' : '.jsonl.gz');
export const partKey = (job: JobRef, index: number) => `${job.jobId}/parts/part-${pad(index)}${partExtension(job)}`;
export const invalidPartKey = (job: JobRef, index: number) =>
  `${job.jobId}/parts/invalid-${pad(index)}${partExtension(job)}`;
export const partsPrefix = (job: JobRef) => `${job.jobId}/parts/`;
export const batchKey = (job: JobRef, index: number) => `${job.jobId}/work/batch-${pad(index)}.jsonl`;

/**
 * Rows identified without a domain (by LinkedIn URL or name) are answered by single calls: their batches, parts and
 * call markers are `single-N`, beside the bulk `part-N`/`batch-N`.
 */
export type BatchSeries = 'bulk' | 'single';
export const singleBatchKey = (job: JobRef, index: number) => `${job.jobId}/work/single-${pad(index)}.jsonl`;
export const singlePartKey = (job: JobRef, index: number) =>
  `${job.jobId}/parts/single-${pad(index)}${partExtension(job)}`;
/**
 * The batch number a single batch's call markers carry (`work/calls/part-<n>-…`): apart from every bulk batch's, so
 * that the calls a `single-N` part names settle exactly its own markers.
 */
export const SINGLE_MARKER_BASE = 10_000_000;
export const seriesBatchKey = (job: JobRef, series: BatchSeries, index: number) =>
  series === 'single' ? singleBatchKey(job, index) : batchKey(job, index);
export const seriesPartKey = (job: JobRef, series: BatchSeries, index: number) =>
  series === 'single' ? singlePartKey(job, index) : partKey(job, index);

/** The rows repeating a value whose first row is in batch `index` of `series`, and the part of their lines. */
export const duplicatesKey = (job: JobRef, series: BatchSeries, index: number) =>
  `${job.jobId}/work/dups-${series}-${pad(index)}.jsonl`;
export const duplicatesPrefix = (job: JobRef) => `${job.jobId}/work/dups-`;
export const duplicatePartKey = (job: JobRef, series: BatchSeries, index: number) =>
  `${job.jobId}/parts/${series === 'single' ? 'single-dup' : 'dup'}-${pad(index)}${partExtension(job)}`;

/** Domains that single calls resolved, per bulk batch holding them (written once every single batch is done). */
export const foldKey = (job: JobRef, index: number) => `${job.jobId}/work/fold-${pad(index)}.json`;
export const foldDoneKey = (job: JobRef) => `${job.jobId}/work/_folded.json`;
export const preparedKey = (job: JobRef) => `${job.jobId}/work/_prepared.json`;
export const exportStateKey = (job: JobRef) => `${job.jobId}/work/export.json`;
export const exportLinkKey = (job: JobRef) => `${job.jobId}/work/export-link.json`;
export const manifestKey = (job: JobRef) => `${job.jobId}/_manifest.json`;

/** Whether `key` is one of the job's own `part-NNNNN` / `invalid-NNNNN` objects, directly in its parts folder. */
export function isOwnPartKey(job: JobRef, key: string): boolean {
  const prefix = partsPrefix(job);
  if (!key.startsWith(prefix)) return false;
  const name = key.slice(prefix.length);
  return (
    /^(part|invalid|single|dup|single-dup)-\d{5,}$/.test(name.slice(0, -partExtension(job).length)) &&
    name.endsWith(partExtension(job))
  );
}

/** A lines part's name: its key without folder and extension (`part-00003`, `single-dup-00001`, `invalid-00000`). */
export const linesPartName = (job: JobRef, key: string) =>
  key.slice(partsPrefix(job).length, key.length - partExtension(job).length);

/**
 * `<job>/tables/<table>/<lines part name>.<ext>`: a flat table's part, named as the lines part it comes from, so that
 * a rewritten lines part rewrites its tables and no two lines parts share a table part.
 */
export const tablePartKey = (job: JobRef, table: TableName, linesKey: string, format: OutputFormat) =>
  `${job.jobId}/tables/${table}/${linesPartName(job, linesKey)}${tableExtension(format, job.compression)}`;
export const tablesPrefix = (job: JobRef) => `${job.jobId}/tables/`;

/** Whether `key` is a part of one of the job's flat tables. */
export function isTableKey(job: JobRef, key: string): boolean {
  const prefix = tablesPrefix(job);
  if (!key.startsWith(prefix)) return false;
  const match =
    /^(rows|signals|invalid)\/(part|invalid|single|dup|single-dup)-\d{5,}(\.jsonl\.gz|\.jsonl|\.csv|\.parquet)$/.exec(
      key.slice(prefix.length),
    );
  return match !== null && (!match[3]?.startsWith('.jsonl') || match[3] === tableExtension('jsonl', job.compression));
}
