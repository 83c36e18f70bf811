import { optionsHash, type PartIdentity } from '../run/parts.ts';
import { partsPrefix } from './layout.ts';
import type { JobRef, PreparedInput } from './types.ts';

/**
 * The numbered series of a job's lines parts, by name: `part-N` (bulk batches), `invalid-N` (rows without a usable
 * value), `single-N` (rows answered one call each), `dup-N` / `single-dup-N` (rows that repeat an earlier one).
 */
export type PartTable = 'part' | 'invalid' | 'single' | 'dup' | 'single-dup';

/**
 * Whose a job's part is: the job id, the hash of its kind and the options that change answers, and its number in its
 * series. Each series is numbered apart, so the hash also says which series (`part` keeps the plain hash).
 */
export function jobPartIdentity(job: JobRef, index: number, table: PartTable = 'part'): PartIdentity {
  const options = optionsHash({
    kind: job.kind,
    options: job.options ?? {},
    // Kept input columns are in every line: a part written without them is not this job's.
    ...(job.keepColumns?.length ? { keepColumns: job.keepColumns } : {}),
    ...(table !== 'part' ? { table } : {}),
  });
  return { owner: job.jobId, options, index };
}

/** The series and number of one of the job's own lines parts (`isOwnPartKey`), from its key. */
export function partTableOf(job: JobRef, key: string): { table: PartTable; index: number } {
  const match = /^(single-dup|single|dup|invalid|part)-(\d{5,})\./.exec(key.slice(partsPrefix(job).length));
  return { table: (match?.[1] ?? 'part') as PartTable, index: Number(match?.[2] ?? -1) };
}

/** The identity of one of the job's own lines parts, from its key. */
export function linesPartIdentity(job: JobRef, key: string): PartIdentity {
  const { table, index } = partTableOf(job, key);
  return jobPartIdentity(job, index, table);
}

/** How many parts of a series the prepared input has: parts numbered at or past it are not the job's. */
export function partTableSize(prepared: PreparedInput | undefined, table: PartTable, invalidPerPart: number): number {
  if (!prepared) return 0;
  if (table === 'invalid') return Math.ceil(prepared.invalid / invalidPerPart);
  return table === 'single' || table === 'single-dup' ? (prepared.singleBatches ?? 0) : prepared.batches;
}
