/** A describe answer's fields as the kit writes them (`CrmFieldInfo`). */
import type { CrmFieldInfo, CrmFieldType } from '../writer.ts';

const KIT_TYPE: Record<string, CrmFieldType> = {
  double: 'number',
  int: 'number',
  long: 'number',
  currency: 'number',
  percent: 'number',
  date: 'date',
  datetime: 'datetime',
  string: 'string',
  textarea: 'string',
  url: 'string',
  email: 'string',
  phone: 'string',
  picklist: 'string',
  multipicklist: 'string',
  combobox: 'string',
  encryptedstring: 'string',
  boolean: 'boolean',
};

export interface DescribedField {
  name: string;
  label: string;
  type: string;
  length?: number;
  updateable: boolean;
  calculated?: boolean;
}

export function fieldInfo(field: DescribedField): CrmFieldInfo {
  const type = KIT_TYPE[field.type] ?? 'other';
  return {
    name: field.name,
    label: field.label,
    type,
    crmType: field.type,
    ...(type === 'string' && field.length ? { length: field.length } : {}),
    updateable: field.updateable && !field.calculated,
  };
}
