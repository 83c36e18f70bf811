import type { IdentifierRole } from '../../connectors/normalize/columns.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type BatchSeries, batchKey, seriesBatchKey } from './layout.ts';
import type { JobRef } from './types.ts';

/** One distinct input value of a batch: normalized value, first input row, raw text. */
export interface BatchItem {
  v: string;
  row: number;
  raw: string;
  /** The row's record id (its id column), when the input has one. */
  id?: string;
  /** The row's kept columns (`--keep-columns`), when any. */
  cols?: Record<string, string>;
  /** Single-call items: the value sent (a canonical LinkedIn URL, a name) and its role. */
  s?: string;
  m?: IdentifierRole;
}

/** The fields every output line carries of its input row (output contract: `record_id`, `columns`). */
export function recordFields(item: { id?: string; cols?: Record<string, string> }): {
  record_id: string | null;
  columns?: Record<string, string>;
} {
  return { record_id: item.id ?? null, ...(item.cols ? { columns: item.cols } : {}) };
}

export async function readBatch(store: Store, job: JobRef, index: number): Promise<BatchItem[]> {
  return readSeriesBatch(store, job, 'bulk', index);
}

export async function readSeriesBatch(
  store: Store,
  job: JobRef,
  series: BatchSeries,
  index: number,
): Promise<BatchItem[]> {
  const text = await store.readText(series === 'bulk' ? batchKey(job, index) : seriesBatchKey(job, series, index));
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as BatchItem);
}

/**
 * Which identifier of the row was sent, as an output line names it: a company's `domain`, `linkedin_url` or
 * `company_name`; a person's `email` or `linkedin_url` (their profile).
 */
export function matchedByOf(item: { m?: IdentifierRole }): Exclude<IdentifierRole, 'linkedin_person'> {
  if (item.m === undefined) return 'domain';
  return item.m === 'linkedin_person' ? 'linkedin_url' : item.m;
}
