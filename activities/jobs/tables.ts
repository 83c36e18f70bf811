import type { Store } from '../../connectors/storage/store.ts';
import type { TableName } from '../../contract/tables/columns.ts';
import {
  enrichTables,
  invalidRows,
  invalidTable,
  keptColumnsOf,
  rowsTable,
  verifyRows,
} from '../../contract/tables/rows.ts';
import { SIGNALS_TABLE } from '../../contract/tables/signals.ts';
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
} from '../run/parts.ts';
import { linesPartName, tablePartKey } from './layout.ts';
import { linesPartIdentity } from './part-identity.ts';
import type { JobRef, PartCounts } from './types.ts';

type Line = Record<string, unknown>;

/**
 * A bulk job's flat tables, from the lines of one part: `rows` (and `signals` for enrich) from a `part-`, `single-`,
 * `dup-` or `single-dup-` part, `invalid` from an `invalid-` part.
 */
export function jobTableRows(job: JobRef, lines: readonly Line[], invalid: boolean): TableRows[] {
  const kept = keptColumnsOf(lines, job.keepColumns);
  if (invalid) {
    const def = invalidTable(kept);
    return [{ def, rows: invalidRows(lines, def) }];
  }
  // A contact's line has the enrich shape (employer, signals) and the person: its rows table has the person's columns.
  if (job.kind === 'enrich' || job.kind === 'enrich-contacts') {
    const def = rowsTable(job.kind, kept);
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

/**
 * The tables a lines part has, as `jobTableRows` makes them: `invalid` for an `invalid-NNNNN` part; else `rows`, and
 * `signals` for the kinds whose lines hold signals.
 */
export function tablesOfPart(job: JobRef, linesKey: string): TableName[] {
  if (isInvalidPart(job, linesKey)) return ['invalid'];
  if (job.kind === 'enrich' || job.kind === 'enrich-contacts') return ['rows', 'signals'];
  return job.kind === 'verify-emails' ? ['rows'] : [];
}

const isInvalidPart = (job: JobRef, linesKey: string) => linesPartName(job, linesKey).startsWith('invalid-');

/** Where a lines part's tables go and in which formats (none unless `--format` asked for some). */
export function jobTableOutput(job: JobRef, linesKey: string): TableOutput {
  return {
    formats: job.formats ?? [],
    compression: job.compression,
    keyOf: (table, format) => tablePartKey(job, table, linesKey, format),
  };
}

/** The encoded table parts of one lines part (empty when the job asked for no format). */
export function encodeJobTables(job: JobRef, linesKey: string, lines: readonly Line[]): EncodedTablePart[] {
  if (!job.formats || job.formats.length === 0) return [];
  return encodeTableParts(jobTableOutput(job, linesKey), jobTableRows(job, lines, isInvalidPart(job, linesKey)));
}

/** Publishes a lines part after its tables (the lines part is what marks its batch done). */
export async function writeJobPart(
  store: Store,
  job: JobRef,
  key: string,
  lines: readonly Line[],
  counts: PartCounts,
  status: PartStatus = 'done',
  calls: readonly string[] = [],
  identity: PartIdentity = linesPartIdentity(job, key),
): Promise<StoredPart> {
  await writeTableParts(store, encodeJobTables(job, key, lines), status, identity);
  return writePart(store, job.compression, key, lines, counts, status, calls, identity);
}
