import { InputError } from '../../connectors/errors.ts';
import { describeChoice } from '../../connectors/normalize/columns.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type InputReading, identifyRecord, openInputRecords } from '../input/identify.ts';
import { SINGLE_BATCH_SIZE } from './prepare.ts';
import { SpillingDedupe } from './spilling-dedupe.ts';
import type { JobKind, PreparedInput } from './types.ts';

export interface ScanRequest extends InputReading {
  kind: Exclude<JobKind, 'intent-export'>;
  batchSize: number;
}

/**
 * The counts `prepareInput` would record for an input (rows, distinct, single-call rows, duplicates, invalid,
 * batches, the columns used), found by the same reading, identifying and deduplication, but writing nothing: what a
 * dry run shows before anything is spent.
 */
export async function scanInput(openStore: (url: string) => Store, request: ScanRequest): Promise<PreparedInput> {
  const stats = { rows: 0, distinct: 0, singles: 0, duplicates: 0, invalid: 0 };
  const seen = new SpillingDedupe();
  const count = (key: string) => {
    if (key.includes(':') && !key.includes('@')) stats.singles += 1;
    else stats.distinct += 1;
  };
  let reading: Awaited<ReturnType<typeof openInputRecords>> | undefined;
  try {
    reading = await openInputRecords(openStore, request.kind, request);
    for await (const record of reading.records) {
      stats.rows += 1;
      const outcome = identifyRecord(record);
      if (!outcome.ok) stats.invalid += 1;
      else {
        const verdict = await seen.add(outcome.key, record.row, () => outcome.key);
        if (verdict === 'duplicate') stats.duplicates += 1;
        else if (verdict === 'new') count(outcome.key);
      }
    }
    for await (const key of seen.drain()) count(key);
    stats.duplicates += seen.deferredDuplicates;
  } finally {
    await seen.close();
  }
  const columns = reading?.columns();
  const skippedLines = reading?.skippedLines() ?? 0;
  if (stats.rows === 0) throw new InputError(`input ${request.input} has no data rows`);
  const { singles, ...rest } = stats;
  return {
    input: request.input,
    ...rest,
    ...(skippedLines > 0 ? { skippedLines } : {}),
    batches: Math.ceil(stats.distinct / request.batchSize),
    batchSize: request.batchSize,
    ...(singles > 0
      ? { singles, singleBatches: Math.ceil(singles / SINGLE_BATCH_SIZE), singleBatchSize: SINGLE_BATCH_SIZE }
      : {}),
    ...(columns ? { columns: describeChoice(columns) } : {}),
  };
}
