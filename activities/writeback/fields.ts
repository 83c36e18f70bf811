import { crmFieldName, fieldLabel, salesforceName } from '../../connectors/crm/fields.ts';
import type { CrmName, CrmObject } from '../../connectors/crm/writer.ts';
import { rowsTable } from '../../contract/tables/rows.ts';
import type { SyncKind } from '../sync/types.ts';
import type { WritePolicy } from './types.ts';

/**
 * The rows-table columns a night writes unless `--write-fields` says otherwise: the record's status and its signals'
 * count and newest signal. Each is a CRM field of the kit's (`Signal_Count__c` / `signal_count`); docs/crm-write-back.md
 * lists them, and `signal-kit crm fields` creates or prints them.
 */
export const DEFAULT_WRITE_COLUMNS = [
  'status',
  'signal_count',
  'latest_signal_at',
  'latest_signal_type',
  'latest_signal_summary',
] as const;

/** Salesforce Lead ids start with its key prefix `00Q`; a contacts export of leads is written to Lead. */
const LEAD_PREFIX = /^00Q/;

/** The object a night writes to: from the kind and the CRM (and, in Salesforce, from the export's ids). */
export function writeObjectOf(crm: CrmName, kind: SyncKind, ids: readonly string[]): CrmObject {
  if (crm === 'hubspot') return kind === 'enrich' ? 'companies' : 'contacts';
  if (kind === 'enrich') return 'Account';
  return ids.length > 0 && ids.every((id) => LEAD_PREFIX.test(id)) ? 'Lead' : 'Contact';
}

/** One field a night writes: its rows-table column, its CRM name, its policy. */
export interface WriteField {
  column: string;
  field: string;
  policy: WritePolicy;
}

export function writeFieldsOf(
  crm: CrmName,
  columns: readonly string[] | undefined,
  policies: Record<string, WritePolicy> | undefined,
): WriteField[] {
  const chosen = columns?.length ? columns : DEFAULT_WRITE_COLUMNS;
  return chosen.map((column) => ({
    column,
    field: crmFieldName(crm, column),
    policy: policies?.[column] ?? policies?.[crmFieldName(crm, column)] ?? 'overwrite',
  }));
}

/** A field of the kit's to create in a CRM (HubSpot property, Salesforce custom field): name, label, type, length. */
export interface KitFieldSpec {
  name: string;
  label: string;
  type: 'string' | 'number' | 'datetime';
  length?: number;
}

const KIT_TYPES: Record<string, KitFieldSpec['type']> = { int: 'number', double: 'number', timestamp: 'datetime' };

/** The fields of `columns` (default: the night's) as `crm` names them, typed from the rows table's columns. */
export function kitFields(crm: CrmName, kind: SyncKind, columns?: readonly string[]): KitFieldSpec[] {
  const types = new Map(rowsTable(kind).columns.map((column) => [column.name, column.type]));
  return (columns?.length ? columns : DEFAULT_WRITE_COLUMNS).map((column) => {
    const type = KIT_TYPES[types.get(column) ?? ''] ?? 'string';
    const name = crmFieldName(crm, column);
    const label = fieldLabel(salesforceName(column));
    return type === 'string' ? { name, label, type, length: 255 } : { name, label, type };
  });
}
