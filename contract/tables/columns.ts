/**
 * The flat tables' column model. Each table is written once, as a table of columns (`columnTable`): a column's name,
 * type, where its value comes from and what it means. From that one list come the Parquet schema, the CSV header,
 * the JSONL row shape, the JSON Schema shipped in `schemas/` and the flattening itself (flatten.ts). A table's
 * columns never depend on the rows a part holds, so every part of a table, in every run, has the same schema (no
 * union drift).
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
   * The user's own value (a record id, a kept column, the input as given): written byte for byte in every format,
   * never neutralized in CSV, so that a CRM import puts back exactly what the export held.
   */
  userValue?: true;
  /**
   * Values mostly distinct (free text, ids): Parquet writes them PLAIN, without the dictionary that would not pay,
   * and without min/max statistics.
   */
  text?: true;
  /** Where the value is read, as a path of keys (see `columnTable`); absent for a column the flattening does not fill. */
  from?: ValuePath;
}

/** A path into what a row is made from: the line's (or signal's) keys, or with `derived`, values worked out first. */
export interface ValuePath {
  derived: boolean;
  keys: readonly string[];
  /** The rest of the object at `keys`: what no other column of the table takes from it. */
  rest?: true;
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

const TYPES: Record<string, ColumnType> = {
  string: 'string',
  text: 'string',
  json: 'json',
  int: 'int',
  double: 'double',
  timestamp: 'timestamp',
  date: 'date',
  string_list: 'string_list',
};

/**
 * Columns written as a table, one a line: `name  type  from  description`.
 * - type: a `ColumnType`, or `text` (a string column of mostly distinct values); `!` after it: never null.
 * - from: a dotted path into the line (or the signal), e.g. `company.name`; `@path` reads the values worked out
 *   before the row (counts, the newest signal, where a signal was found); `rest:path` is what is left of the object
 *   at `path` once the table's other columns took their fields from it; `-` when nothing fills the column; a `<`
 *   in front marks the user's own value (`Column.userValue`), e.g. `<record_id`.
 * - description: the rest of the line.
 */
export function columnTable(lines: string): Column[] {
  const columns: Column[] = [];
  for (const line of lines.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const [name, typeToken, from, ...words] = trimmed.split(/\s+/);
    const required = typeToken?.endsWith('!') ?? false;
    const typeName = typeToken?.replace(/!$/, '') ?? '';
    const type = TYPES[typeName];
    if (name === undefined || type === undefined || from === undefined || words.length === 0) {
      throw new Error(`column table: cannot read "${trimmed}" (name, type, from and a description)`);
    }
    const userValue = from.startsWith('<');
    const path = userValue ? from.slice(1) : from;
    columns.push({
      name,
      type,
      nullable: !required,
      description: words.join(' '),
      ...(typeName === 'text' ? { text: true as const } : {}),
      ...(userValue ? { userValue: true as const } : {}),
      ...(path === '-' ? {} : { from: valuePath(path) }),
    });
  }
  return columns;
}

function valuePath(text: string): ValuePath {
  const rest = text.startsWith('rest:');
  const path = rest ? text.slice('rest:'.length) : text;
  const derived = path.startsWith('@');
  return { derived, keys: (derived ? path.slice(1) : path).split('.'), ...(rest ? { rest: true as const } : {}) };
}

/** A column built in code (the feed tables, feeds.ts), filled by its own code rather than a `from` path. */
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
 * Their values are the line's `columns[name]`.
 */
export function withKeptColumns(columns: Column[], kept: readonly string[] | undefined): Column[] {
  if (!kept || kept.length === 0) return columns;
  const taken = new Set(columns.map((c) => c.name.toLowerCase()));
  const extra: Column[] = [];
  for (const name of kept) {
    let out = name;
    while (taken.has(out.toLowerCase())) out = `input_${out}`;
    taken.add(out.toLowerCase());
    extra.push({
      name: out,
      type: 'string',
      nullable: true,
      description: `the input's "${name}" column, as read`,
      source: name,
      userValue: true,
      from: { derived: false, keys: ['columns', name] },
    });
  }
  return [...columns, ...extra];
}
