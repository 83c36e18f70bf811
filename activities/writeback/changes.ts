import { parse } from 'csv-parse';
import { crmColumnName, crmDialectOf } from '../../connectors/crm/fields.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { rowsTable } from '../../contract/tables/rows.ts';
import type { SyncKind } from '../sync/types.ts';

/** A record of `changes.csv`: its CRM id and the cells of the columns asked, by rows-table column. */
export interface ChangedRecord {
  id: string;
  cells: Record<string, string>;
}

export interface ChangesFile {
  /** The export's id header (the file's first column). */
  idHeader: string;
  records: ChangedRecord[];
  /** Rows without a record id: nothing to write them to. */
  withoutId: number;
}

/**
 * Reads a night's `changes.csv` (or `rows.csv`): the first column is the record id under the export's header; each
 * enrichment column is found under the name the header's CRM gives it (`Signal_Count__c`, `Signal Count`,
 * `signal_count`). A kept column of the export with the same name comes first in the file, so the last match wins.
 */
export async function readChangedRecords(
  store: Store,
  key: string,
  kind: SyncKind,
  columns: readonly string[],
): Promise<ChangesFile> {
  const parser = (await store.openRead(key)).pipe(parse({ bom: true, relax_column_count: true }));
  let positions: Map<string, number> | undefined;
  let idHeader = '';
  const records: ChangedRecord[] = [];
  let withoutId = 0;
  for await (const row of parser as AsyncIterable<string[]>) {
    if (positions === undefined) {
      idHeader = row[0] ?? '';
      positions = columnPositions(row, kind, columns);
      continue;
    }
    const id = (row[0] ?? '').trim();
    if (id === '') {
      withoutId += 1;
      continue;
    }
    const cells: Record<string, string> = {};
    for (const [column, at] of positions) cells[column] = row[at] ?? '';
    records.push({ id, cells });
  }
  return { idHeader, records, withoutId };
}

/** The record ids of a night's `rows.csv`: tonight's export, so a record gone from it is never written. */
export async function readRecordIds(store: Store, key: string): Promise<Set<string>> {
  const parser = (await store.openRead(key)).pipe(parse({ bom: true, relax_column_count: true, from_line: 2 }));
  const ids = new Set<string>();
  for await (const row of parser as AsyncIterable<string[]>) {
    const id = (row[0] ?? '').trim();
    if (id !== '') ids.add(id);
  }
  return ids;
}

function columnPositions(header: readonly string[], kind: SyncKind, columns: readonly string[]): Map<string, number> {
  const dialect = crmDialectOf(header[0]);
  const known = new Set(rowsTable(kind).columns.map((column) => column.name));
  const positions = new Map<string, number>();
  for (const column of columns) {
    if (!known.has(column)) continue;
    const name = crmColumnName(column, dialect);
    const at = header.lastIndexOf(name);
    const prefixed = header.lastIndexOf(`signal_kit_${name}`);
    if (prefixed > 0) positions.set(column, prefixed);
    else if (at > 0) positions.set(column, at);
  }
  return positions;
}
