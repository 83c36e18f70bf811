import type { ColumnChoice, ColumnRequest, IdentifierRole } from '../../connectors/normalize/columns.ts';
import { firstUsable, type Identified } from '../../connectors/normalize/identifiers.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { InputEncoding } from './encoding.ts';
import { type InputRecord, openInput, readInputRecords } from './read-input.ts';

/**
 * How a row of the user's file is matched, the same for every kind of run that reads one (a job, the dry run's scan,
 * the nightly CRM sync): which identifier columns are tried, in order, and the row's first usable identifier.
 */

/** The identifiers a file's rows are tried by, in order (for enrich: domain or website, LinkedIn URL, name). */
export const JOB_ROLES: Record<'enrich' | 'verify-emails' | 'enrich-contacts', IdentifierRole[]> = {
  'enrich-contacts': ['email', 'linkedin_person'],
  enrich: ['domain', 'linkedin_url', 'company_name'],
  'verify-emails': ['email'],
};

/** What picks a file's columns: the flags `--column`, `--id-column` and `--keep-columns`. */
export interface ColumnFlags {
  column?: string | undefined;
  idColumn?: string | undefined;
  keepColumns?: string[] | undefined;
}

export function columnRequest(kind: string, request: ColumnFlags): ColumnRequest {
  return {
    roles: JOB_ROLES[kind === 'verify-emails' || kind === 'enrich-contacts' ? kind : 'enrich'],
    column: request.column,
    idColumn: request.idColumn,
    keepColumns: request.keepColumns,
  };
}

/** A row's first usable identifier, or why it has none. */
export function identifyRecord(record: InputRecord): Identified {
  if (record.error) return { ok: false, reason: record.error };
  const outcome = firstUsable(record.candidates ?? []);
  // Bytes that are not UTF-8 were decoded as U+FFFD: say so, rather than "not a valid host name".
  if (!outcome.ok && typeof record.raw === 'string' && record.raw.includes('\uFFFD')) {
    return { ok: false, reason: 'not valid UTF-8 (is the file in another encoding?)' };
  }
  return outcome;
}

/** What a job reads its input by: the file, its columns (`--column`, `--id-column`, `--keep-columns`), encoding, sheet. */
export interface InputReading extends ColumnFlags {
  input: string;
  encoding?: InputEncoding | undefined;
  sheet?: string | undefined;
}

/**
 * A job's input as records, read as every kind of run reads it, with what the reading learns on the way: the columns
 * chosen (once the header is read) and the lines that are no records (blank lines, a report's footer).
 */
export async function openInputRecords(
  openStore: (url: string) => Store,
  kind: string,
  reading: InputReading,
): Promise<{
  records: AsyncGenerator<InputRecord>;
  columns: () => ColumnChoice | undefined;
  skippedLines: () => number;
}> {
  let columns: ColumnChoice | undefined;
  let skipped = 0;
  const source = await openInput(openStore, reading.input, reading.encoding, reading.sheet);
  const records = readInputRecords(
    source,
    columnRequest(kind, reading),
    (choice) => {
      columns = choice;
    },
    (lines) => {
      skipped += lines;
    },
  );
  return { records, columns: () => columns, skippedLines: () => skipped };
}
