import { InputError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { optionsHash } from '../run/parts.ts';
import { jobPrefix } from './layout.ts';
import type { JobRef } from './types.ts';

/**
 * What a job id stands for, recorded in `<job>/_job.json` at its first start: a second start of the same id with
 * another input or other options is refused, instead of going on with the first input's batches and reporting the
 * second's in the manifest.
 */
export interface JobIdentity {
  kind: string;
  input: string | null;
  column: string | null;
  options: Record<string, unknown>;
  compression: 'gzip' | 'none';
}

export const jobIdentityKey = (job: Pick<JobRef, 'jobId'>) => `${jobPrefix(job as JobRef)}_job.json`;

export function jobIdentityOf(job: JobRef, input: string | null, column: string | undefined): JobIdentity {
  return {
    kind: job.kind,
    input,
    column: column ?? null,
    options: job.options ?? {},
    compression: job.compression ?? 'gzip',
  };
}

/** The fields in which `now` differs from the identity `recorded` at the job's first start (none: the same job). */
export function identityDifferences(recorded: JobIdentity, now: JobIdentity): (keyof JobIdentity)[] {
  const fields = ['kind', 'input', 'column', 'options', 'compression'] as const;
  return fields.filter((field) => optionsHash(recorded[field] ?? null) !== optionsHash(now[field] ?? null));
}

/** The message of a start refused because its job id stands for another job. */
export function identityMessage(
  jobId: string,
  recorded: JobIdentity,
  now: JobIdentity,
  differs: readonly (keyof JobIdentity)[],
): string {
  const shown = differs.map(
    (field) => `${field} ${JSON.stringify(recorded[field])} then, ${JSON.stringify(now[field])} now`,
  );
  return (
    `job id ${jobId} was first started differently (${shown.join('; ')}): ` +
    'run it as it was, or give this job another --job-id'
  );
}

/** Reads the identity recorded for the job, if any (an unreadable record counts as none). */
export async function readJobIdentity(store: Store, job: Pick<JobRef, 'jobId'>): Promise<JobIdentity | undefined> {
  try {
    const recorded = await readJsonIfPresent<JobIdentity>(store, jobIdentityKey(job));
    return recorded && typeof recorded === 'object' && typeof recorded.kind === 'string' ? recorded : undefined;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Records the job's identity at its first start; refuses (InputError, not retried) a start that differs. */
export async function checkJobIdentity(store: Store, job: JobRef, now: JobIdentity): Promise<void> {
  const recorded = await readJobIdentity(store, job);
  if (!recorded) {
    await store.writeText(jobIdentityKey(job), `${JSON.stringify(now, null, 2)}\n`, {
      contentType: 'application/json',
    });
    return;
  }
  const differs = identityDifferences(recorded, now);
  if (differs.length > 0) throw new InputError(identityMessage(job.jobId, recorded, now, differs));
}
