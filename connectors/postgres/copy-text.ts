/**
 * Rows encoded in COPY's text format (tab-separated, `\N` for null, backslash escapes): what a load sends, whatever
 * its source was. A `jsonb` value given as a string is taken as JSON text; any other value is serialized as JSON. A
 * `timestamptz` value given as a number is epoch milliseconds.
 */
import type { PgColumn, PgType } from './table.ts';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;

const escapeText = (text: string) => (SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c] as string) : text);

/** One field of a COPY text line. */
export function copyTextField(value: unknown, type: PgType): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return escapeText(value);
  if (typeof value === 'number') return type === 'timestamptz' ? new Date(value).toISOString() : String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return escapeText(JSON.stringify(value));
}

/** One COPY text line (with its newline) for a record, the columns in order. */
export function copyTextLine(record: Record<string, unknown>, columns: readonly PgColumn[]): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as PgColumn;
    if (i > 0) line += '\t';
    line += copyTextField(record[column.name], column.type);
  }
  return `${line}\n`;
}
