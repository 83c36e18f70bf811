/**
 * A CRM import file (a job's `rows.csv`, a night's `rows.csv` and `changes.csv`): the record id first under the
 * export's own header, the kept columns as the export spelled them, then the enrichment columns under names the CRM's
 * mapping screen matches to custom fields. The table's columns come from the caller (the rows table of its kind).
 */
import { type CrmDialect, crmColumnName, crmDialectOf } from './fields.ts';

/** The input columns the CRM file is built around: the record id column and the kept ones, as the header spells them. */
export interface CrmInputColumns {
  record_id?: unknown;
  kept?: unknown;
}

/** What the file needs of a table column: its name, and for a kept column the input header it came from. */
interface FileColumn {
  name: string;
  source?: string | undefined;
}

/** The kept columns of the file: those the input's column choice names, else the job's `--keep-columns`. */
export const crmKeptColumns = (input: CrmInputColumns | undefined, keepColumns?: readonly string[]): string[] =>
  Array.isArray(input?.kept) ? (input.kept as string[]) : [...(keepColumns ?? [])];

/** The export's id header without a byte-order mark, when the input has one. */
export const crmIdHeader = (input: CrmInputColumns | undefined): string | undefined =>
  typeof input?.record_id === 'string' ? input.record_id.replace(/^\uFEFF/, '') : undefined;

/** A CRM file's table (`def`, its columns in the file's order), the table it came from, and its header. */
export interface CrmFile<T> {
  def: T;
  flat: T;
  header: string[];
  dialect: CrmDialect;
}

/**
 * The file's columns from the rows table `flat` (`rowsTable(kind, crmKeptColumns(…))`): the record id first, then
 * the kept columns, then the enrichment, and the header naming each for the CRM the id header says wrote the export.
 */
export function crmFileColumns<T extends { table: string; columns: FileColumn[] }>(
  flat: T,
  input: CrmInputColumns | undefined,
): CrmFile<T> {
  const idHeader = crmIdHeader(input);
  const dialect = crmDialectOf(idHeader);
  const id = flat.columns.filter((column) => column.name === 'record_id');
  const keptColumns = flat.columns.filter((column) => column.source !== undefined);
  const rest = flat.columns.filter((column) => column.name !== 'record_id' && column.source === undefined);
  const ordered = [...id, ...keptColumns, ...rest];
  const taken = new Set<string>();
  const header = ordered.map((column) => {
    let name = fileColumnName(column, idHeader, dialect);
    while (taken.has(name.toLowerCase())) name = `signal_kit_${name}`;
    taken.add(name.toLowerCase());
    return name;
  });
  return { def: { ...flat, table: 'rows', columns: ordered }, flat, header, dialect };
}

function fileColumnName(column: FileColumn, idHeader: string | undefined, dialect: CrmDialect): string {
  if (column.name === 'record_id') return idHeader ?? column.name;
  if (column.source !== undefined) return dialect === 'plain' ? column.name : column.source.replace(/^\uFEFF/, '');
  return crmColumnName(column.name, dialect);
}
