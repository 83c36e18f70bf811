import { writeCsvFile } from '../../connectors/crm/csv-file.ts';
import { type CrmInputColumns, crmFileColumns, crmKeptColumns } from '../../connectors/crm/import-file.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { TableDef, TableRow } from '../../contract/tables/columns.ts';
import { enrichTables, invalidLinesAsRows, type RowsKind, rowsTable, verifyRows } from '../../contract/tables/rows.ts';
import { readPartLines } from '../run/parts.ts';
import { csvHeader, csvRow } from '../tables/encode.ts';
import { RowOrder } from './row-order.ts';
import type { JobRef, ManifestPart } from './types.ts';

/**
 * `<job>/rows.csv`: the file a CRM imports back as an update. One row per input row, in input order, under the id
 * column as the export named it, with the columns the CRM needs to accept the update (kept by default, see
 * `CRM_UPDATE_COLUMNS` in connectors/crm/spellings.ts) and the user's kept columns byte for byte, then the
 * enrichment columns under names the CRM's mapping screen matches to custom fields (`crmColumnName`).
 */
export const crmCsvKey = (job: JobRef) => `${job.jobId}/rows.csv`;

/** A job's own lines parts (bulk, single, duplicate and invalid): every input row is a line of exactly one of them. */
const LINES_PART = /\/parts\/(part|single|dup|single-dup|invalid)-\d{5,}\.jsonl(\.gz)?$/;
const INVALID_LINES_PART = /\/parts\/invalid-\d{5,}\.jsonl(\.gz)?$/;

const rowsKindOf = (job: JobRef): RowsKind | undefined =>
  job.kind === 'enrich' || job.kind === 'enrich-contacts' || job.kind === 'verify-emails' ? job.kind : undefined;

/**
 * Writes `rows.csv` from the job's lines parts (in the manifest): each line flattened as the rows table flattens it
 * (an invalid line as an `invalid` row with its reason), put back in input order (`RowOrder`, bounded memory), under
 * one header row. Written again by every finalization, from the parts the manifest lists.
 */
export async function writeCrmCsv(
  store: Store,
  job: JobRef,
  parts: readonly ManifestPart[],
  input?: CrmInputColumns,
): Promise<ManifestPart> {
  const kind = rowsKindOf(job);
  const order = new RowOrder();
  let header: string[] = [];
  try {
    if (kind !== undefined) {
      const file = crmFileColumns(rowsTable(kind, crmKeptColumns(input, job.keepColumns)), input);
      header = file.header;
      const lineParts = parts.filter((part) => (part.table ?? 'lines') === 'lines' && LINES_PART.test(part.key));
      for (const part of lineParts) {
        const lines = await readPartLines(store, part.key);
        for (const row of tableRowsOf(kind, lines, file.flat, INVALID_LINES_PART.test(part.key))) {
          await order.add(row['row'] as number, csvRow(file.def, row));
        }
      }
    }
    const headerLine = header.length > 0 ? csvHeader(header) : undefined;
    const written = await writeCsvFile(store, crmCsvKey(job), headerLine, order.inOrder());
    return { ...written, table: 'rows', format: 'csv' };
  } finally {
    await order.close();
  }
}

function tableRowsOf(kind: RowsKind, lines: Record<string, unknown>[], def: TableDef, invalid: boolean): TableRow[] {
  if (invalid) return invalidLinesAsRows(lines, def);
  return kind === 'verify-emails' ? verifyRows(lines, def) : enrichTables(lines, def).rows;
}
