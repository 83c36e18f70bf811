/**
 * The PostgreSQL tables `load` writes, from the flat tables' column lists (activities/tables/): the same columns in
 * PostgreSQL types, two columns saying where each row came from, a key, and which version of a row is newer.
 *
 * | table                  | key                                             | newer version                      |
 * |------------------------|-------------------------------------------------|------------------------------------|
 * | `<prefix>signals`      | `signal_id`                                     | later `detected_at`, then later    |
 * |                        |                                                 | `source_finished_at`               |
 * | `<prefix>enrich_rows`, | `row_key`: `id:<record_id>`, else               | later `source_finished_at`         |
 * | `<prefix>enrich_contacts_rows`, | `domain:<domain>` (`email:` for verify; |                           |
 * | `<prefix>verify_emails_rows` | `email:`, then `linkedin:` for contacts), else |                        |
 * |                        | the row of that manifest                        |                                    |
 * | `<prefix>invalid`      | `source_manifest`, `row`                        | later `source_finished_at`         |
 * | `<prefix>companies`,   | `key`: the feed's key of the company or person  | later `source_finished_at`         |
 * | `<prefix>contacts`     |                                                 |                                    |
 */

import { ManifestError } from '../connectors/errors.ts';
import type { PgColumn, PgTable, PgType } from '../connectors/postgres/index.ts';
import type { Column, ColumnType, TableDef } from '../contract/tables/columns.ts';
import { FEED_TABLES, type FeedTableName } from '../contract/tables/feeds.ts';
import { invalidTable, type RowsKind, rowsTable } from '../contract/tables/rows.ts';
import { SIGNALS_TABLE } from '../contract/tables/signals.ts';

/** The PostgreSQL type each flat-table column type is loaded as. */
export const PG_TYPE: Record<ColumnType, PgType> = {
  string: 'text',
  json: 'jsonb',
  int: 'integer',
  double: 'double precision',
  timestamp: 'timestamptz',
  date: 'date',
  // A JSON array: what the CSV and JSONL parts hold, and what jsonb_array_elements_text reads.
  string_list: 'jsonb',
};

/** Where a row came from: the manifest it was loaded from, and when its job or run finished (newer wins). */
export const SOURCE_MANIFEST = 'source_manifest';
export const SOURCE_FINISHED_AT = 'source_finished_at';
const PROVENANCE: PgColumn[] = [
  { name: SOURCE_MANIFEST, type: 'text', notNull: true },
  { name: SOURCE_FINISHED_AT, type: 'timestamptz', notNull: true },
];

/** One table to load: its PostgreSQL shape and the flat table it is filled from. */
export interface LoadTable {
  pg: PgTable;
  def: TableDef;
}

const pgColumn = (column: Column, name: string): PgColumn => ({
  name,
  type: PG_TYPE[column.type],
  ...(column.nullable ? {} : { notNull: true }),
});

/** PostgreSQL keeps the first 63 bytes of a name (NAMEDATALEN - 1) and drops the rest. */
export const PG_NAME_BYTES = 63;

/** `name` cut to at most `bytes` UTF-8 bytes, never inside a character. */
function cutTo(name: string, bytes: number): string {
  let out = '';
  let size = 0;
  for (const char of name) {
    size += Buffer.byteLength(char);
    if (size > bytes) break;
    out += char;
  }
  return out;
}

/**
 * The flat table's column names as PostgreSQL keeps them, distinct: a name of at most 63 bytes stays as it is; a
 * longer one (a kept input header) is cut to 63 bytes, and when that cut is a name taken already (compared without
 * case, as the kept columns' own names are), it is cut shorter and numbered, `_2`, `_3`, … until it is free.
 */
export function pgColumnNames(names: readonly string[]): string[] {
  const taken = new Set(names.filter((name) => Buffer.byteLength(name) <= PG_NAME_BYTES).map((n) => n.toLowerCase()));
  return names.map((name) => {
    if (Buffer.byteLength(name) <= PG_NAME_BYTES) return name;
    let out = cutTo(name, PG_NAME_BYTES);
    for (let n = 2; taken.has(out.toLowerCase()); n++) out = `${cutTo(name, PG_NAME_BYTES - `_${n}`.length)}_${n}`;
    taken.add(out.toLowerCase());
    return out;
  });
}

function columnsOf(def: TableDef, url: string): PgColumn[] {
  const names = pgColumnNames(def.columns.map((column) => column.name));
  const clash = names.find((name) => PROVENANCE.some((p) => p.name === name));
  if (clash) throw new ManifestError(url, `the kept input column "${clash}" has the name of a column load adds`);
  return [...def.columns.map((column, i) => pgColumn(column, names[i] as string)), ...PROVENANCE];
}

export const PREFIX = /^[a-z_][a-z0-9_]{0,39}$/;

export function signalsLoadTable(prefix: string, url: string): LoadTable {
  return {
    def: SIGNALS_TABLE,
    pg: {
      name: `${prefix}signals`,
      columns: columnsOf(SIGNALS_TABLE, url),
      key: ['signal_id'],
      newerBy: ['detected_at', SOURCE_FINISHED_AT],
      tieBreak: ['"row" asc nulls last'],
    },
  };
}

/** The rows of a job, by record id, else by the value the row was answered for, else by the row of its manifest. */
export function rowsLoadTable(prefix: string, kind: RowsKind, kept: string[] | undefined, url: string): LoadTable {
  const def = rowsTable(kind, kept);
  const value =
    kind === 'enrich'
      ? `'domain:' || domain`
      : kind === 'enrich-contacts'
        ? `'email:' || nullif(email, ''), 'linkedin:' || nullif(linkedin_url, '')`
        : `'email:' || email`;
  const key: PgColumn = {
    name: 'row_key',
    type: 'text',
    notNull: true,
    generatedAs: `coalesce('id:' || nullif(record_id, ''), ${value}, 'row:' || ${SOURCE_MANIFEST} || '#' || "row")`,
  };
  return {
    def,
    pg: {
      name: `${prefix}${kind.replace('-', '_')}_rows`,
      columns: [...columnsOf(def, url), key],
      key: ['row_key'],
      newerBy: [SOURCE_FINISHED_AT],
      tieBreak: ['"row" asc'],
    },
  };
}

export function invalidLoadTable(prefix: string, kept: string[] | undefined, url: string): LoadTable {
  const def = invalidTable(kept);
  return {
    def,
    pg: {
      name: `${prefix}invalid`,
      columns: columnsOf(def, url),
      key: [SOURCE_MANIFEST, 'row'],
      newerBy: [SOURCE_FINISHED_AT],
    },
  };
}

/** A feed run's companies or contacts, by the feed's key: a later run delivers a record again only when it is newer. */
export function feedLoadTable(prefix: string, table: FeedTableName, url: string): LoadTable {
  const def = FEED_TABLES[table];
  return {
    def,
    pg: { name: `${prefix}${table}`, columns: columnsOf(def, url), key: ['key'], newerBy: [SOURCE_FINISHED_AT] },
  };
}
