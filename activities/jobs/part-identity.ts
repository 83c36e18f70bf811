import { optionsHash, type PartIdentity, type PartRead } from '../parts.ts';
import type { JobRef } from './types.ts';

/**
 * Whose a job's part is: the job id, the hash of its kind and the options that change answers, and its batch index.
 * `invalid-NNNNN` parts (rows without a usable value) are numbered apart, so their hash says which table they are.
 */
export function jobPartIdentity(job: JobRef, index: number, table: 'part' | 'invalid' = 'part'): PartIdentity {
  const options = optionsHash({
    kind: job.kind,
    options: job.options ?? {},
    // Kept input columns are in every line: a part written without them is not this job's.
    ...(job.keepColumns?.length ? { keepColumns: job.keepColumns } : {}),
    ...(table === 'invalid' ? { table } : {}),
  });
  return { owner: job.jobId, options, index };
}

/**
 * The identity to write a batch's part under, after `found` was looked for: it carries why a part there was not
 * trusted (or the note an earlier rewrite carried), so that the manifest reports the batch as redone.
 */
export function redoneIdentity(identity: PartIdentity, found: PartRead): PartIdentity {
  const redone = found.distrusted ?? found.part?.redone;
  return redone ? { ...identity, redone } : identity;
}
