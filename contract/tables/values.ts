import type { ColumnType } from './columns.ts';

/** Conversions of line values into table values: a value of another type becomes null, never an error. */

export const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export const numberOrNull = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** An integer that fits Parquet's INT32. */
export const integerOrNull = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2_147_483_647 ? value : null;

export const stringListOrNull = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : null;

/** Epoch milliseconds of an ISO 8601 time (the service's `Z` or offset forms), or null. */
export function epochMillis(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : null;
}

/** A `YYYY-MM-DD` calendar date that exists, or null. */
export function calendarDate(value: unknown): string | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const at = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(at) && new Date(at).toISOString().startsWith(value) ? value : null;
}

/**
 * A line's value as a column of `type` holds it. A column that is never null holds a string as it is and any other
 * value as its JSON text (an id or a status of another type is kept, not lost); a `json` column holds any value.
 */
export function columnValue(type: ColumnType, nullable: boolean, value: unknown): unknown {
  switch (type) {
    case 'string':
      if (nullable) return stringOrNull(value);
      return typeof value === 'string' ? value : JSON.stringify(value ?? null);
    case 'json':
      return value === undefined ? null : value;
    case 'int':
      return integerOrNull(value);
    case 'double':
      return numberOrNull(value);
    case 'timestamp':
      return epochMillis(value);
    case 'date':
      return calendarDate(value);
    case 'string_list':
      return stringListOrNull(value);
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A `json` column's text. A lone UTF-16 surrogate (which JSON allows, escaped) becomes U+FFFD, as it does in text
 * columns once encoded as UTF-8: DuckDB refuses a JSON value holding one, and with it the whole part.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value);
  // JSON.stringify escapes lone surrogates (and only those) as `\ud800`–`\udfff`: rare, so looked for before redoing.
  return text.includes('\\ud') ? JSON.stringify(value, wellFormed) : text;
}

function wellFormed(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.toWellFormed(), inner]));
}
