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

/**
 * What PostgreSQL cannot hold: NUL, in `text` (SQLSTATE 22021) or as `\u0000` in `jsonb` (22P05). Such a character
 * is loaded as U+FFFD, the Unicode replacement character, and counted (`NulCount`), so that one value never makes a
 * whole load fail.
 */
export const NUL_STAND_IN = '\uFFFD';

/** NUL characters a load replaced by NUL_STAND_IN. */
export interface NulCount {
  nul: number;
}

/** A JSON text's escapes, read pair by pair (so that `\\u0000`, a backslash and then `u0000`, is no NUL). */
const JSON_ESCAPES = /\\(u[0-9a-fA-F]{4}|[\s\S])/g;
const JSON_ESCAPED_NUL = '\\u0000';

function withoutNul(text: string, json: boolean, count: NulCount | undefined): string {
  let out = text;
  if (out.includes('\0')) {
    out = out.replace(/\0/g, () => {
      if (count) count.nul += 1;
      return NUL_STAND_IN;
    });
  }
  if (json && out.includes(JSON_ESCAPED_NUL)) {
    out = out.replace(JSON_ESCAPES, (pair) => {
      if (pair !== JSON_ESCAPED_NUL) return pair;
      if (count) count.nul += 1;
      return '\\ufffd';
    });
  }
  return out;
}

/**
 * One field of a COPY text line; a NUL it holds becomes NUL_STAND_IN, counted in `count` when given.
 */
export function copyTextField(value: unknown, type: PgType, count?: NulCount): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return escapeText(withoutNul(value, type === 'jsonb', count));
  if (typeof value === 'number') return type === 'timestamptz' ? new Date(value).toISOString() : String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return escapeText(withoutNul(JSON.stringify(value), true, count));
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
