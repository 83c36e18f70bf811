import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { BulkEnrichItem } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readBatch } from './batch-file.ts';
import { toActivityFailure } from './failures.ts';
import { partKey } from './layout.ts';
import { readPart, writePart, zeroCounts } from './parts.ts';
import type { BatchResult, JobRef } from './types.ts';
import { CallMarker } from './unsaved.ts';

/** Filters applied to every domain of a job (spec 4.1 field names). */
export interface EnrichOptions {
  signal_types?: string[];
  signal_subtypes?: string[];
  /** ISO 8601. */
  detected_after?: string;
  /** Signals per domain, at most 500. */
  limit?: number;
}

export interface EnrichBatchRequest {
  job: JobRef;
  index: number;
  options: EnrichOptions;
}

/** Errors that concern the request itself: its domains become error records instead of failing the job. */
const RECORD_LEVEL_ERRORS = new Set(['ValidationError', 'NotFoundError']);

/**
 * Enriches batch `index` with one bulk call and publishes `parts/part-<index>`: one line per distinct domain.
 * A part that already exists is returned from its recorded counts without calling the API.
 */
export async function enrichBatch(
  client: SignalClient,
  store: Store,
  request: EnrichBatchRequest,
): Promise<BatchResult> {
  const { job, index, options } = request;
  const key = partKey(job, index);
  const existing = await readPart(store, key);
  if (existing && !existing.failed) return { index, reused: true, failed: false, counts: existing.counts };

  const items = await readBatch(store, job, index);
  let results: BulkEnrichItem[];
  let credits = 0;
  const marker = await CallMarker.begin(store, job, index);
  try {
    const response = await client.enrichCompanies(
      { domains: items.map((item) => item.v), ...options },
      { retry: false },
    );
    results = response.results;
    credits = response.credits;
  } catch (error) {
    await marker.failed(error);
    if (!(error instanceof Error) || !RECORD_LEVEL_ERRORS.has(error.name)) throw toActivityFailure(error);
    const code = (error as { code?: string }).code ?? 'request_rejected';
    results = items.map((item) => ({ domain: item.v, status: 'error', error: { code, message: error.message } }));
  }

  const byDomain = new Map(results.map((result) => [result.domain.toLowerCase(), result]));
  const counts = { ...zeroCounts(), credits };
  const lines = items.map((item) => {
    const result = byDomain.get(item.v) ?? missing(item.v);
    counts.lines += 1;
    counts[result.status] += 1;
    const { domain: _domain, status, ...rest } = result;
    return { domain: item.v, status, row: item.row, input: item.raw, ...rest };
  });
  const part = await writePart(store, job, key, lines, counts);
  await marker.saved();
  return { index, reused: false, failed: false, counts: part.counts };
}

function missing(domain: string): BulkEnrichItem {
  return {
    domain,
    status: 'error',
    error: { code: 'missing_result', message: 'the service returned no result for this domain' },
  };
}
