import type { TableName } from '../tables/columns.ts';
import { type OutputFormat, tableExtension } from '../tables/encode.ts';
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

/** `<job>/tables/<table>/part-NNNNN.<ext>`: a flat table's part, numbered as the lines part it comes from. */
export const tablePartKey = (job: JobRef, table: TableName, index: number, format: OutputFormat) =>
  `${job.jobId}/tables/${table}/part-${pad(index)}${tableExtension(format, job.compression)}`;
export const tablesPrefix = (job: JobRef) => `${job.jobId}/tables/`;

/** Whether `key` is a part of one of the job's flat tables, and which: its table, index and format. */
export function parseTableKey(
  job: JobRef,
  key: string,
): { table: TableName; index: number; format: OutputFormat } | undefined {
  const prefix = tablesPrefix(job);
  if (!key.startsWith(prefix)) return undefined;
  const match = /^(rows|signals|invalid)\/part-(\d{5,})(\.jsonl\.gz|\.jsonl|\.csv|\.parquet)$/.exec(
    key.slice(prefix.length),
  );
  if (!match) return undefined;
  const format: OutputFormat = match[3] === '.csv' ? 'csv' : match[3] === '.parquet' ? 'parquet' : 'jsonl';
  if (format === 'jsonl' && match[3] !== tableExtension('jsonl', job.compression)) return undefined;
  return { table: match[1] as TableName, index: Number(match[2]), format };
}

/** The index of a lines part and whether it holds invalid rows (`invalid-NNNNN`). */
export function linesPartIndex(job: JobRef, key: string): { index: number; invalid: boolean } {
  const name = key.slice(partsPrefix(job).length);
  const index = Number(/\d{5,}/.exec(name)?.[0] ?? -1);
  // Single-call and duplicate parts number their tables apart from the bulk parts' (part-N keeps N).
  const series = /^(single-dup|single|dup)-/.exec(name)?.[1];
  const offset = series ? TABLE_INDEX_BASE[series as keyof typeof TABLE_INDEX_BASE] : 0;
  return { index: index + offset, invalid: name.startsWith('invalid-') };
}

/** Where the table parts of `single-N`, `dup-N` and `single-dup-N` lines parts are numbered from. */
const TABLE_INDEX_BASE = { single: 10_000_000, dup: 20_000_000, 'single-dup': 30_000_000 } as const;
