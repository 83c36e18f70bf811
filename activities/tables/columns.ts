/**
 * The flat tables' column model: one list of typed columns per table is the single source of the Parquet schema, the
 * CSV header, the JSONL row shape and the JSON Schema shipped in `schemas/`. A table's columns never depend on the
 * rows a part holds, so every part of a table, in every run, has the same schema (no union drift).
 */

/**
 * - `string`, `json` (text holding one JSON value): Parquet BYTE_ARRAY (UTF8 / JSON).
 * - `int`: Parquet INT32. `double`: DOUBLE.
 * - `timestamp`: Parquet INT64 TIMESTAMP(MILLIS, UTC); in JSONL and CSV an ISO 8601 string ending in `Z`.
 * - `date`: Parquet INT32 DATE; in JSONL and CSV `YYYY-MM-DD`.
 * - `string_list`: Parquet LIST<STRING>; in JSONL an array; in CSV a JSON array.
 */
export type ColumnType = 'string' | 'json' | 'int' | 'double' | 'timestamp' | 'date' | 'string_list';

export interface Column {
  name: string;
  type: ColumnType;
  /** False only for columns every row has. */
  nullable: boolean;
  description: string;
  /** A kept input column: the input's own name for it (the column may be renamed, see `withKeptColumns`). */
  source?: string;
  /**
   * Values mostly distinct (free text, ids): Parquet writes them PLAIN, without the dictionary that would not pay,
   * and without min/max statistics.
   */
  text?: true;
}

/**
 * A flat row: column name → value, null when unknown. Until encoded, a timestamp is epoch milliseconds, a date its
 * `YYYY-MM-DD` text, and a `json` column the value itself (each encoder writes it as JSON text).
 */
export type TableRow = Record<string, unknown>;

export interface TableDef {
  /** The folder of its parts and the manifest's `table`. */
  table: TableName;
  columns: Column[];
}

/** Jobs: `rows`, `signals`, `invalid`; scheduled feeds: `companies` (company search), `contacts` (the people kinds). */
export const TABLE_NAMES = ['rows', 'signals', 'invalid', 'companies', 'contacts'] as const;
export type TableName = (typeof TABLE_NAMES)[number];

export const col = (name: string, type: ColumnType, description: string, nullable = true): Column => ({
  name,
  type,
  nullable,
  description,
});

/** A nullable column of free text (see `Column.text`). */
export const text = (name: string, description: string): Column => ({
  ...col(name, 'string', description),
  text: true,
});

/**
 * Kept input columns (`--keep-columns`) become string columns under their own names, after the table's own; a name
 * that collides with one of them (compared as DuckDB and PostgreSQL do, ignoring case) is prefixed with `input_`.
 */
export function withKeptColumns(columns: Column[], kept: readonly string[] | undefined): Column[] {
  if (!kept || kept.length === 0) return columns;
  const taken = new Set(columns.map((c) => c.name.toLowerCase()));
  const extra: Column[] = [];
  for (const name of kept) {
    let out = name;
    while (taken.has(out.toLowerCase())) out = `input_${out}`;
    taken.add(out.toLowerCase());
    extra.push({ ...col(out, 'string', `the input's "${name}" column, as read`), source: name });
  }
  return [...columns, ...extra];
}
