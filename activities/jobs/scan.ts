import { InputError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { FirstSeen } from './first-seen.ts';
import { openInput, readInputRecords } from './input.ts';
import { classify, DEFAULT_COLUMNS, normalizerFor } from './prepare.ts';
import type { JobKind, PreparedInput } from './types.ts';

export interface ScanRequest {
  kind: Exclude<JobKind, 'intent-export'>;
  input: string;
  column?: string | undefined;
  batchSize: number;
}

/**
 * The counts `prepareInput` would record for an input (rows, distinct, duplicates, invalid, batches), found by the
 * same reading, normalizing and deduplication, but writing nothing: what a dry run shows before anything is spent.
 */
export async function scanInput(openStore: (url: string) => Store, request: ScanRequest): Promise<PreparedInput> {
  const normalize = normalizerFor(request.kind);
  const columns = request.column ? [request.column] : (DEFAULT_COLUMNS[request.kind] ?? []);
  const stats = { rows: 0, distinct: 0, duplicates: 0, invalid: 0 };
  const seen = new FirstSeen();
  try {
    const source = await openInput(openStore, request.input);
    for await (const record of readInputRecords(source, columns)) {
      stats.rows += 1;
      const outcome = classify(record, normalize);
      if (!outcome.ok) stats.invalid += 1;
      else {
        const verdict = await seen.add(outcome.value, record.row, () => '');
        if (verdict === 'duplicate') stats.duplicates += 1;
        else if (verdict === 'new') stats.distinct += 1;
      }
    }
    for await (const _ of seen.drain()) stats.distinct += 1;
    stats.duplicates += seen.deferredDuplicates;
  } finally {
    await seen.close();
  }
  if (stats.rows === 0) throw new InputError(`input ${request.input} has no data rows`);
  return {
    input: request.input,
    ...stats,
    batches: Math.ceil(stats.distinct / request.batchSize),
    batchSize: request.batchSize,
  };
}
