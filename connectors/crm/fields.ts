/**
 * The kit's enrichment fields as each CRM names them: one rows-table column (`signal_count`) is the Salesforce custom
 * field `Signal_Count__c`, the HubSpot property `signal_count` (the API name lower-cased without `__c`) and, in an
 * import file for a tool that maps by label, `Signal Count`.
 */
import type { CrmName } from './writer.ts';

/**
 * How the enrichment columns of an import file are named, from the id column's spelling (which says which CRM wrote
 * the export):
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

/** `Signal_Count__c` → `signal_count`: HubSpot's internal name of the same field. */
export const hubspotName = (salesforceApiName: string): string => salesforceApiName.replace(/__c$/i, '').toLowerCase();

/** A field's label as both CRMs show it: `Signal_Count__c` → `Signal Count`. */
export const fieldLabel = (salesforceApiName: string): string =>
  salesforceApiName.replace(/__c$/i, '').replaceAll('_', ' ');

/** A rows-table column's field name in `crm`: `Signal_Count__c` in Salesforce, `signal_count` in HubSpot. */
export function crmFieldName(crm: CrmName, column: string): string {
  const api = salesforceName(column);
  return crm === 'salesforce' ? api : hubspotName(api);
}

/** The rows-table column a CRM field name stands for (either CRM's spelling), or undefined for a field not the kit's. */
export function columnOfField(field: string, columns: readonly string[]): string | undefined {
  const key = field.toLowerCase().replace(/__c$/, '');
  return columns.find((column) => hubspotName(salesforceName(column)) === key);
}

/** An enrichment column's name in the CRM file of `dialect` (`Signal_Count__c`, `Signal Count`, `signal_count`). */
export function crmColumnName(column: string, dialect: CrmDialect): string {
  if (dialect === 'plain') return column;
  const api = salesforceName(column);
  return dialect === 'salesforce' ? api : fieldLabel(api);
}
