import { InputError } from '../../connectors/errors.ts';
import { type ColumnChoice, describeChoice } from '../../connectors/normalize/columns.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { InputEncoding } from '../input/encoding.ts';
import { columnRequest, identifyRecord } from '../input/identify.ts';
import { openInput, readInputRecords } from '../input/read-input.ts';
import { SINGLE_BATCH_SIZE } from './prepare.ts';
import { SpillingDedupe } from './spilling-dedupe.ts';
import type { JobKind, PreparedInput } from './types.ts';

export interface ScanRequest {
  kind: Exclude<JobKind, 'intent-export'>;
  input: string;
  column?: string | undefined;
  idColumn?: string | undefined;
  keepColumns?: string[] | undefined;
  encoding?: InputEncoding | undefined;
  /** The sheet of an .xlsx input (`--sheet`); the first when absent. */
  sheet?: string | undefined;
  batchSize: number;
}

/**
 * The counts `prepareInput` would record for an input (rows, distinct, single-call rows, duplicates, invalid,
 * batches, the columns used), found by the same reading, identifying and deduplication, but writing nothing: what a
 * dry run shows before anything is spent.
 */
export async function scanInput(openStore: (url: string) => Store, request: ScanRequest): Promise<PreparedInput> {
  const stats = { rows: 0, distinct: 0, singles: 0, duplicates: 0, invalid: 0 };
  let columns: ColumnChoice | undefined;
  const seen = new SpillingDedupe();
  let skippedLines = 0;
  const count = (key: string) => {
    if (key.includes(':') && !key.includes('@')) stats.singles += 1;
    else stats.distinct += 1;
  };
  try {
    const source = await openInput(openStore, request.input, request.encoding, request.sheet);
    const records = readInputRecords(
      source,
      columnRequest(request.kind, request),
      (choice) => {
        columns = choice;
      },
      (lines) => {
        skippedLines += lines;
      },
    );
    for await (const record of records) {
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
