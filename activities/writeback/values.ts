import type { CrmFieldInfo } from '../../connectors/crm/writer.ts';

export type CrmValue = string | number | boolean | null;

/** A cell typed for its field, or why it cannot be. `truncated`: text cut to the field's length. */
export type TypedValue = { value: CrmValue; truncated: boolean } | { error: string };

const DATE = /^\d{4}-\d{2}-\d{2}/;

/**
 * A `rows.csv` cell as the CRM field takes it: numbers as numbers, a date as `YYYY-MM-DD`, a date-time as ISO 8601 in
 * UTC (Salesforce and HubSpot both take it; HubSpot's date fields want midnight UTC, which `YYYY-MM-DD` is), booleans
 * as booleans, text cut to the field's length. An empty cell clears the field.
 */
export function typeValue(field: CrmFieldInfo, cell: string): TypedValue {
  if (cell === '') return { value: null, truncated: false };
  switch (field.type) {
    case 'number': {
      const n = Number(cell);
      return Number.isFinite(n)
        ? { value: n, truncated: false }
        : { error: `${field.name}: "${cell}" is not a number` };
    }
    case 'date':
      return DATE.test(cell) ? { value: cell.slice(0, 10), truncated: false } : dateError(field, cell);
    case 'datetime': {
      const at = Date.parse(cell);
      if (Number.isNaN(at)) return dateError(field, cell);
      return { value: new Date(at).toISOString(), truncated: false };
    }
    case 'boolean':
      if (/^(true|false)$/i.test(cell)) return { value: cell.toLowerCase() === 'true', truncated: false };
      return { error: `${field.name}: "${cell}" is not true or false` };
    default:
      return cutText(field, cell);
  }
}

function cutText(field: CrmFieldInfo, cell: string): TypedValue {
  if (field.length === undefined || field.length <= 0) return { value: cell, truncated: false };
  const chars = [...cell];
  if (chars.length <= field.length) return { value: cell, truncated: false };
  return { value: chars.slice(0, field.length).join(''), truncated: true };
}

const dateError = (field: CrmFieldInfo, cell: string): TypedValue => ({
  error: `${field.name}: "${cell}" is not a date`,
});

/** Two values as the CRM shows them, compared as text (a number read back as `"3"` equals `3`). */
export function sameValue(a: CrmValue | undefined, b: CrmValue | undefined): boolean {
  return normalized(a) === normalized(b);
}

function normalized(value: CrmValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return String(value);
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? value : new Date(at).toISOString();
}
