/**
 * The tables of a load's plan, from the flat tables' column lists (contract/tables/): the same columns (named by
 * their PostgreSQL types; the DuckDB destination maps them to its own), two columns saying where each row came from,
 * a key, and which version of a row is newer.
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
 * | `<prefix>sync_enrich_rows`, | `sync_name`, `row_key` (as a job's rows)   | later `source_finished_at`; a row  |
 * | `<prefix>sync_enrich_contacts_rows` |                                    | a newer night lacks: `gone_at` set |
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

/**
 * A table whose every load is the whole of its scope (a sync night holds its export's every record): a row of the
 * scope that a newer load did not bring is marked gone (`goneColumn` set to that load's finish), never deleted, and
 * unmarked when a later load brings it back.
 */
export interface Snapshot {
  /** The column naming the scope (a sync's name), and this load's value of it. */
  column: string;
  value: string;
  goneColumn: string;
}

/**
 * One table to load: its shape (columns named by their PostgreSQL types, which every destination maps to its own),
 * the flat table it is filled from, and the values of the columns load adds beside the provenance.
 */
export interface LoadTable {
  pg: PgTable;
  def: TableDef;
  /** Columns after the provenance, the same on every row of this load (a sync night's name; `gone_at` null). */
  constants?: Record<string, string | null>;
  snapshot?: Snapshot;
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

function columnsOf(def: TableDef, url: string, added: readonly PgColumn[] = []): PgColumn[] {
  const names = pgColumnNames(def.columns.map((column) => column.name));
  const clash = names.find((name) => [...PROVENANCE, ...added].some((p) => p.name === name));
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

/** A row's key: its record id, else the value the row was answered for, else the row of its manifest. */
function rowKeyColumn(kind: RowsKind): PgColumn {
  const value =
    kind === 'enrich'
      ? `'domain:' || domain`
      : kind === 'enrich-contacts'
        ? `'email:' || nullif(email, ''), 'linkedin:' || nullif(linkedin_url, '')`
        : `'email:' || email`;
  return {
    name: 'row_key',
    type: 'text',
    notNull: true,
    generatedAs: `coalesce('id:' || nullif(record_id, ''), ${value}, 'row:' || ${SOURCE_MANIFEST} || '#' || "row")`,
  };
}

/** The rows of a job, by record id, else by the value the row was answered for, else by the row of its manifest. */
export function rowsLoadTable(prefix: string, kind: RowsKind, kept: string[] | undefined, url: string): LoadTable {
  const def = rowsTable(kind, kept);
  const key = rowKeyColumn(kind);
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

export const SYNC_NAME = 'sync_name';
export const GONE_AT = 'gone_at';

/**
 * A CRM sync's rows, one per record of the sync (`sync_name`, then the record id as a job's rows are keyed): every
 * night holds its export's every record, so a record a newer night did not bring is marked gone (`gone_at`).
 */
export function syncRowsLoadTable(
  prefix: string,
  night: { name: string; rowsKind: RowsKind },
  kept: string[] | undefined,
  url: string,
): LoadTable {
  const def = rowsTable(night.rowsKind, kept);
  const added: PgColumn[] = [
    { name: SYNC_NAME, type: 'text', notNull: true },
    { name: GONE_AT, type: 'timestamptz' },
  ];
  return {
    def,
    pg: {
      name: `${prefix}sync_${night.rowsKind.replace('-', '_')}_rows`,
      columns: [...columnsOf(def, url, added), ...added, rowKeyColumn(night.rowsKind)],
      key: [SYNC_NAME, 'row_key'],
      newerBy: [SOURCE_FINISHED_AT],
      tieBreak: ['"row" asc'],
    },
    constants: { [SYNC_NAME]: night.name, [GONE_AT]: null },
    snapshot: { column: SYNC_NAME, value: night.name, goneColumn: GONE_AT },
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
