import type { Column, TableDef } from '../../contract/tables/columns.ts';
import { type RowsKind, rowsTable } from '../../contract/tables/rows.ts';

/**
 * The columns of a CRM import file (a job's `rows.csv`, a CRM sync's `rows.csv` and `changes.csv`): the rows table's,
 * the record id first under the export's own header, the kept columns, then the enrichment columns under names the
 * CRM's mapping screen matches to custom fields.
 */

/**
 * How the enrichment columns are named, from the id column's spelling (which says which CRM wrote the export):
 * - `salesforce` (`Id`, `Account ID`, `Contact ID`, `Lead ID`): Salesforce API names, `Signal_Count__c`, which Data
 *   Loader's "Auto-Match Fields to Columns" and the Data Import Wizard match to the custom fields;
 * - `labels` (HubSpot `Record ID`, Dynamics 365 `(Do Not Modify) …`, Zoho `Record Id`, Pipedrive `… - ID`): field
 *   labels, `Signal Count`, which HubSpot's, Dynamics 365's, Zoho's and Pipedrive's import screens match;
 * - `plain` (any other id, or none): the rows table's own names, `signal_count`.
 */
export type CrmDialect = 'salesforce' | 'labels' | 'plain';

const SALESFORCE_IDS = new Set(['Id', 'Account ID', 'Contact ID', 'Lead ID']);
const LABEL_IDS = /^(Record ID|Record Id|Organization - ID|Person - ID|\(Do Not Modify\) .+)$/;

export function crmDialectOf(idHeader: string | undefined): CrmDialect {
  if (idHeader === undefined) return 'plain';
  if (SALESFORCE_IDS.has(idHeader)) return 'salesforce';
  return LABEL_IDS.test(idHeader) ? 'labels' : 'plain';
}

/** `signal_count` → `Signal_Count__c`, `company_name` → `Signal_Company_Name__c`: a Salesforce custom field's API name. */
export function salesforceName(column: string): string {
  const words = column.split('_').map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return `${/^signals?$/.test(column.split('_')[0] ?? '') ? '' : 'Signal_'}${words.join('_')}__c`;
}

/** An enrichment column's name in the CRM file of `dialect` (`Signal_Count__c`, `Signal Count`, `signal_count`). */
export function crmColumnName(column: string, dialect: CrmDialect): string {
  if (dialect === 'plain') return column;
  const api = salesforceName(column);
  return dialect === 'salesforce' ? api : api.slice(0, -'__c'.length).replaceAll('_', ' ');
}

/** The input columns the CRM file is built around: the record id column and the kept ones, as the header spells them. */
export interface CrmInputColumns {
  record_id?: unknown;
  kept?: unknown;
}

/** The CRM file's columns: the rows table's, the record id first, then the kept columns, then the enrichment. */
export function crmFileColumns(
  kind: RowsKind,
  input: CrmInputColumns | undefined,
  keepColumns?: readonly string[],
): { def: TableDef; flat: TableDef; header: string[] } {
  const kept = Array.isArray(input?.kept) ? (input.kept as string[]) : (keepColumns ?? []);
  const def = rowsTable(kind, kept);
  const idHeader = typeof input?.record_id === 'string' ? input.record_id.replace(/^\uFEFF/, '') : undefined;
  const dialect = crmDialectOf(idHeader);
  const id = def.columns.filter((column) => column.name === 'record_id');
  const keptColumns = def.columns.filter((column) => column.source !== undefined);
  const rest = def.columns.filter((column) => column.name !== 'record_id' && column.source === undefined);
  const ordered: Column[] = [...id, ...keptColumns, ...rest];
  const taken = new Set<string>();
  const header = ordered.map((column) => {
    let name =
      column.name === 'record_id'
        ? (idHeader ?? column.name)
        : column.source !== undefined
          ? dialect === 'plain'
            ? column.name
            : column.source.replace(/^\uFEFF/, '')
          : crmColumnName(column.name, dialect);
    while (taken.has(name.toLowerCase())) name = `signal_kit_${name}`;
    taken.add(name.toLowerCase());
    return name;
  });
  return { def: { table: 'rows', columns: ordered }, flat: def, header };
}
