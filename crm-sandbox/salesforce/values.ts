/**
 * A value sent for a field, checked and typed as Salesforce stores it: numbers for `double`/`int`/`currency`/
 * `percent`, `YYYY-MM-DD` for `date`, `YYYY-MM-DDThh:mm:ss.000+0000` for `datetime`, text no longer than the field's
 * length, a well-formed address for `email`. A refusal carries the per-record error Salesforce gives.
 */
import type { FieldSpec } from './fields.ts';

export type FieldValue = string | number | boolean | null;

export interface RecordError {
  statusCode: string;
  message: string;
  fields: string[];
}

export type Converted = { ok: true; value: FieldValue } | { ok: false; error: RecordError };

const NUMERIC = new Set(['double', 'int', 'currency', 'percent']);
const TEXT = new Set(['string', 'textarea', 'url', 'email', 'phone', 'picklist', 'reference']);

const refuse = (statusCode: string, message: string, field: string): Converted => ({
  ok: false,
  error: { statusCode, message, fields: [field] },
});

const wrongType = (field: FieldSpec, value: unknown): Converted =>
  refuse(
    'INVALID_TYPE_ON_FIELD_IN_RECORD',
    `${field.label ?? field.name}: value not of required type: ${String(value)}`,
    field.name,
  );

function toNumber(field: FieldSpec, value: unknown): Converted {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) return wrongType(field, value);
  if (field.type === 'int' && !Number.isInteger(n)) return wrongType(field, value);
  const scale = field.scale ?? 0;
  const integerDigits = Math.trunc(Math.abs(n)).toString().length;
  if (field.precision !== undefined && integerDigits > field.precision - scale) {
    return refuse(
      'NUMBER_OUTSIDE_VALID_RANGE',
      `${field.name}: value outside of valid range on numeric field: ${n}`,
      field.name,
    );
  }
  return { ok: true, value: Number(n.toFixed(scale)) };
}

function toDate(field: FieldSpec, value: unknown): Converted {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return wrongType(field, value);
  const d = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value
    ? wrongType(field, value)
    : { ok: true, value };
}

/** `2026-12-07T17:00:00.000+0000`: how Salesforce answers a datetime. */
export function salesforceDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

function toDateTime(field: FieldSpec, value: unknown): Converted {
  if (
    typeof value !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})$/.test(value)
  ) {
    return wrongType(field, value);
  }
  const ms = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? wrongType(field, value) : { ok: true, value: salesforceDateTime(ms) };
}

function toText(field: FieldSpec, value: unknown): Converted {
  const s =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : undefined;
  if (s === undefined) return wrongType(field, value);
  if (field.length !== undefined && s.length > field.length) {
    return refuse(
      'STRING_TOO_LONG',
      `${field.label ?? field.name}: data value too large: ${s.slice(0, 40)} (max length=${field.length})`,
      field.name,
    );
  }
  if (field.type === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s)) {
    return refuse('INVALID_EMAIL_ADDRESS', `${field.name}: invalid email address: ${s}`, field.name);
  }
  return { ok: true, value: s };
}

function toBoolean(field: FieldSpec, value: unknown): Converted {
  if (typeof value === 'boolean') return { ok: true, value };
  if (value === 'true' || value === 'false') return { ok: true, value: value === 'true' };
  return wrongType(field, value);
}

/** `value` typed for `field`, or the per-record error. `null` empties the field. */
export function convertValue(field: FieldSpec, value: unknown): Converted {
  if (value === null) return { ok: true, value: null };
  if (NUMERIC.has(field.type)) return toNumber(field, value);
  if (field.type === 'date') return toDate(field, value);
  if (field.type === 'datetime') return toDateTime(field, value);
  if (field.type === 'boolean') return toBoolean(field, value);
  if (TEXT.has(field.type)) return toText(field, value);
  return wrongType(field, value);
}
