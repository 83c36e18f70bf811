/**
 * Rows encoded in COPY's text format (tab-separated, `\N` for null, backslash escapes): what a load sends when its
 * source is not already a CSV the server can read.
 */
import type { PgColumn } from './table.ts';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;

function field(value: unknown, column: PgColumn): string {
  if (value === null || value === undefined) return '\\N';
  let text: string;
  if (column.type === 'jsonb') text = JSON.stringify(value);
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return SPECIAL.test(text) ? text.replace(SPECIALS, (c) => ESCAPES[c] as string) : text;
}

/** One COPY text line (with its newline) for a record, the columns in order. */
export function copyTextLine(record: Record<string, unknown>, columns: readonly PgColumn[]): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as PgColumn;
    if (i > 0) line += '\t';
    line += field(record[column.name], column);
  }
  return `${line}\n`;
}
