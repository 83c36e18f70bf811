import type { Manifest } from '../../activities/jobs/types.ts';
import { MANIFEST_SCHEMA_VERSION } from '../../contract/manifest-schemas.ts';

/** A manifest as the kit writes one: a completed enrich job under `output` of 10 distinct domains that cost 40 credits. */
export function completedJobManifest(jobId: string, output: string, over: Partial<Manifest> = {}): Manifest {
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    job_id: jobId,
    kind: 'enrich',
    input: 'file:///in.csv',
    output,
    status: 'completed',
    started_at: '2026-11-20T10:00:00.000Z',
    finished_at: '2026-11-20T10:01:00.000Z',
    counts: { input_rows: 10, distinct: 10, duplicates: 0, ok: 10, not_found: 0, error: 0, invalid: 0, lines: 10 },
    credits_charged: 40,
    unsaved_answers: { credits: 0, unknown_calls: 0 },
    batches: { total: 1, done: 1, failed: 0 },
    parts: [],
    details: { options: {} },
    ...over,
  };
}
