import { finalizeJob } from '../../activities/jobs/finalize.ts';
import type { JobRef, PreparedInput } from '../../activities/jobs/types.ts';
import type { Store } from '../../connectors/storage/store.ts';

/** Finalizes a completed job whose input had `rows` distinct rows and no invalid ones, as one prepared it. */
export function finalizeCompleted(store: Store, job: JobRef, rows: number, prepared: Partial<PreparedInput> = {}) {
  return finalizeJob(store, {
    job,
    input: 'x',
    startedAt: new Date().toISOString(),
    status: 'completed',
    prepared: { input: 'x', rows, distinct: rows, duplicates: 0, batches: 1, invalid: 0, batchSize: 100, ...prepared },
  });
}
