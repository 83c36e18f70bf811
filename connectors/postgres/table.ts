/**
 * A table as the loader sees it: columns with PostgreSQL types, a primary key, and the columns that decide which of
 * two versions of a row is newer. The DDL is generated here and nowhere else.
 */
import pg from 'pg';

export type PgType = 'text' | 'integer' | 'bigint' | 'double precision' | 'boolean' | 'date' | 'timestamptz' | 'jsonb';

export interface PgColumn {
  name: string;
  type: PgType;
  notNull?: boolean;
  /** A stored generated column: this SQL expression over the other columns (never written by a load). */
  generatedAs?: string;
}

export interface PgTable {
  /** The table's name, unquoted (a prefix already applied). */
  name: string;
  columns: readonly PgColumn[];
  /** The primary key: one version of a row per key. */
  key: readonly string[];
  /**
   * Compared as a row, larger wins: a loaded version replaces the stored one only when it is strictly newer, so
   * loading the same data again changes nothing and an older load never undoes a newer one.
   */
  newerBy: readonly string[];
  /** Among versions of one key within a single load that tie on `newerBy`: the first by this order wins. */
  tieBreak?: readonly string[];
}

export const quote = (name: string) => pg.escapeIdentifier(name);

function columnSql(column: PgColumn): string {
  const generated = column.generatedAs ? ` generated always as (${column.generatedAs}) stored` : '';
  return `${quote(column.name)} ${column.type}${generated}${column.notNull ? ' not null' : ''}`;
}

/** CREATE TABLE IF NOT EXISTS with the key as primary key. */
export function createTableSql(table: PgTable): string {
  const columns = table.columns.map(columnSql);
  columns.push(`primary key (${table.key.map(quote).join(', ')})`);
  return `create table if not exists ${quote(table.name)} (\n  ${columns.join(',\n  ')}\n)`;
}

/** ALTER TABLE … ADD COLUMN IF NOT EXISTS for each column: a table created by an older kit gains the new columns. */
export function addColumnsSql(table: PgTable): string[] {
  return table.columns
    .filter((column) => !column.notNull && !column.generatedAs)
    .map((column) => `alter table ${quote(table.name)} add column if not exists ${columnSql(column)}`);
}

/** The columns a load writes (generated ones are computed by the server). */
export const writableColumns = (table: PgTable) => table.columns.filter((column) => !column.generatedAs);
