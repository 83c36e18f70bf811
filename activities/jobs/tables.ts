import type { Store } from '../../connectors/storage/store.ts';
import {
  type EncodedTablePart,
  encodeTableParts,
  type PartIdentity,
  type PartStatus,
  type StoredPart,
  type TableOutput,
  type TableRows,
  writePart,
  writeTableParts,
} from '../parts.ts';
import { enrichTables, invalidRows, invalidTable, keptColumnsOf, rowsTable, verifyRows } from '../tables/rows.ts';
import { SIGNALS_TABLE } from '../tables/signals.ts';
import { invalidPartKey, partKey, tablePartKey } from './layout.ts';
import { jobPartIdentity } from './part-identity.ts';
import type { JobRef, PartCounts } from './types.ts';

type Line = Record<string, unknown>;

/**
 * A bulk job's flat tables, from the lines of one part: `rows` (and `signals` for enrich) from a `part-NNNNN`,
 * `invalid` from an `invalid-NNNNN`. Numbered as that part, so that a rewritten part rewrites its tables.
 */
export function jobTableRows(job: JobRef, lines: readonly Line[], invalid: boolean): TableRows[] {
  const kept = keptColumnsOf(lines, job.keepColumns);
  if (invalid) {
    const def = invalidTable(kept);
    return [{ def, rows: invalidRows(lines, def) }];
  }
  if (job.kind === 'enrich') {
    const def = rowsTable('enrich', kept);
    const { rows, signals } = enrichTables(lines, def);
    return [
      { def, rows },
      { def: SIGNALS_TABLE, rows: signals },
    ];
  }
  if (job.kind === 'verify-emails') {
    const def = rowsTable('verify-emails', kept);
    return [{ def, rows: verifyRows(lines, def) }];
  }
  return [];
}

/** Where a job's tables go and in which formats (none unless `--format` asked for some). */
export function jobTableOutput(job: JobRef, index: number): TableOutput {
  return {
    formats: job.formats ?? [],
    compression: job.compression,
    keyOf: (table, format) => tablePartKey(job, table, index, format),
  };
}

/** The encoded table parts of one lines part (empty when the job asked for no format). */
export function encodeJobTables(
  job: JobRef,
  index: number,
  lines: readonly Line[],
  invalid = false,
): EncodedTablePart[] {
  if (!job.formats || job.formats.length === 0) return [];
  return encodeTableParts(jobTableOutput(job, index), jobTableRows(job, lines, invalid));
}

/** Publishes a lines part (`part-NNNNN`, or `invalid-NNNNN` when `invalid`) after its tables. */
export async function writeJobPart(
  store: Store,
  job: JobRef,
  index: number,
  lines: readonly Line[],
  counts: PartCounts,
  status: PartStatus = 'done',
  invalid = false,
  calls: readonly string[] = [],
  identity: PartIdentity = jobPartIdentity(job, index, invalid ? 'invalid' : 'part'),
): Promise<StoredPart> {
  await writeTableParts(store, encodeJobTables(job, index, lines, invalid), status, identity);
  const key = invalid ? invalidPartKey(job, index) : partKey(job, index);
  return writePart(store, job.compression, key, lines, counts, status, calls, identity);
}
