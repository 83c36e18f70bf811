/**
 * The DuckDB destination (`--into duckdb:///absolute/path/warehouse.duckdb`, through `@duckdb/node-api`): the same
 * plan, the same COPY text of the parts and the same upsert semantics as PostgreSQL's (destination.ts). Each source's
 * COPY text lines are appended as text into a staging table, cast into the table's types, the newest version of each
 * key kept, then merged: a stored row is replaced only by a strictly newer version. DuckDB has no stored generated
 * column, so a generated column (`row_key`) is computed from the same expression as the rows are merged.
 */
import { isAbsolute } from 'node:path';
import { type DuckDBAppender, type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DatabaseError, KitError } from '../connectors/errors.ts';
import type { CopyInput, CopySource, PgColumn, PgTable, PgType, UpsertResult } from '../connectors/postgres/index.ts';
import type { Destination, DestinationTx } from './destination.ts';
import type { Snapshot } from './tables.ts';

/** The DuckDB type each column type of the plan is loaded as. */
const DUCKDB_TYPE: Record<PgType, string> = {
  text: 'VARCHAR',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  'double precision': 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamptz: 'TIMESTAMPTZ',
  jsonb: 'JSON',
};

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `duckdb:///abs/path/warehouse.duckdb` → `/abs/path/warehouse.duckdb`; a relative or empty path is refused. */
export function duckdbPath(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseError('--into duckdb: must be duckdb:///absolute/path/file.duckdb', {});
  }
  const path = decodeURIComponent(parsed.pathname);
  if (parsed.protocol !== 'duckdb:' || parsed.host !== '' || !isAbsolute(path) || path.endsWith('/')) {
    throw new DatabaseError('--into duckdb: must be duckdb:///absolute/path/file.duckdb (no host, a file path)', {});
  }
  return path;
}

function failure(error: unknown, context: { table?: string; part?: string; what: string }): Error {
  if (error instanceof KitError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DatabaseError(`${context.what}: ${message}`, {
    ...(context.table ? { table: context.table } : {}),
    ...(context.part ? { part: context.part } : {}),
    cause: error,
  });
}

/** One field of a COPY text line: `\N` is null, backslash escapes undone. */
function copyField(field: string): string | null {
  if (field === '\\N') return null;
  if (!field.includes('\\')) return field;
  return field.replace(/\\(.)/gs, (_, c: string) =>
    c === 'n' ? '\n' : c === 'r' ? '\r' : c === 't' ? '\t' : c === 'b' ? '\b' : c === 'f' ? '\f' : c === 'v' ? '\v' : c,
  );
}

/** Appends a source's COPY text lines to the staging table, as they come; how many rows. */
async function appendSource(appender: DuckDBAppender, source: CopySource, width: number): Promise<number> {
  let rows = 0;
  let rest = Buffer.alloc(0);
  const appendLine = (line: Buffer) => {
    const fields = line.toString('utf8').split('\t');
    if (fields.length !== width) throw new Error(`a line of ${fields.length} fields, not ${width}`);
    for (const field of fields) {
      const value = copyField(field);
      if (value === null) appender.appendNull();
      else appender.appendVarchar(value);
    }
    appender.endRow();
    rows += 1;
  };
  for await (const chunk of source.body) {
    let bytes = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a)) {
      appendLine(bytes.subarray(0, at));
      bytes = bytes.subarray(at + 1);
    }
    rest = Buffer.from(bytes);
  }
  if (rest.length > 0) appendLine(rest);
  return rows;
}

/** A column's value in the typed staging table: its text cast to its type, or a generated column's expression. */
const typedColumn = (column: PgColumn) =>
  column.generatedAs
    ? `${column.generatedAs} as ${quote(column.name)}`
    : `cast(${quote(column.name)} as ${DUCKDB_TYPE[column.type]}) as ${quote(column.name)}`;

/** `stored` is older than `loaded` by the table's `newerBy` (compared as a row; a missing time is the oldest). */
function olderSql(table: PgTable, stored: string, loaded: string): string {
  const types = new Map(table.columns.map((column) => [column.name, column.type]));
  const term = (alias: string, name: string) =>
    types.get(name) === 'timestamptz'
      ? `coalesce(${alias}.${quote(name)}, '-infinity'::timestamptz)`
      : `${alias}.${quote(name)}`;
  const terms = table.newerBy.map((name) => [term(stored, name), term(loaded, name)] as const);
  const clauses = terms.map(([s, l], i) => {
    const equal = terms.slice(0, i).map(([ps, pl]) => `${ps} = ${pl}`);
    return `(${[...equal, `${s} < ${l}`].join(' and ')})`;
  });
  return `(${clauses.join(' or ')})`;
}

class DuckdbTransaction implements DestinationTx {
  readonly #connection: DuckDBConnection;
  #staged = 0;

  constructor(connection: DuckDBConnection) {
    this.#connection = connection;
  }

  async #run(sql: string, context: { table?: string; what: string }) {
    try {
      return await this.#connection.run(sql);
    } catch (error) {
      throw failure(error, context);
    }
  }

  async ensureTable(table: PgTable): Promise<void> {
    const columns = table.columns.map(
      (c) => `${quote(c.name)} ${DUCKDB_TYPE[c.type]}${c.notNull && !c.generatedAs ? ' not null' : ''}`,
    );
    const sql = `create table if not exists ${quote(table.name)} (\n  ${columns.join(',\n  ')}\n)`;
    await this.#run(sql, { table: table.name, what: 'create table' });
    for (const column of table.columns.filter((c) => !c.notNull && !c.generatedAs)) {
      const add = `alter table ${quote(table.name)} add column if not exists ${quote(column.name)} ${DUCKDB_TYPE[column.type]}`;
      await this.#run(add, { table: table.name, what: 'add column' });
    }
  }

  /** The sources appended as text into a staging table of the input's columns; its name and the rows read. */
  async #stage(table: PgTable, input: CopyInput): Promise<{ stage: string; rows: number }> {
    const stage = `signal_kit_stage_${++this.#staged}`;
    const columns = input.columns.map((name) => `${quote(name)} VARCHAR`);
    await this.#run(`create temp table ${quote(stage)} (${columns.join(', ')})`, {
      table: table.name,
      what: 'create the staging table',
    });
    const appender = await this.#connection.createAppender(stage, 'main', 'temp');
    let rows = 0;
    try {
      for await (const source of input.open()) {
        try {
          rows += await appendSource(appender, source, input.columns.length);
        } catch (error) {
          throw failure(error, { table: table.name, part: source.name, what: 'copy' });
        }
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    return { stage, rows };
  }

  async upsert(table: PgTable, input: CopyInput): Promise<UpsertResult> {
    if (input.format !== 'text') throw new DatabaseError('the DuckDB destination reads COPY text only', {});
    const { stage, rows } = await this.#stage(table, input);
    const newest = `${stage}_newest`;
    const key = table.key.map(quote);
    const order = [...table.newerBy.map((name) => `${quote(name)} desc nulls last`), ...(table.tieBreak ?? [])];
    const typed = table.columns.map(typedColumn).join(', ');
    await this.#run(
      `create temp table ${quote(newest)} as select * from (select ${typed} from ${quote(stage)}) qualify row_number() over (partition by ${key.join(', ')} order by ${order.join(', ')}) = 1`,
      { table: table.name, what: 'merge' },
    );
    const sameKey = table.key.map((name) => `stored.${quote(name)} = loaded.${quote(name)}`).join(' and ');
    const counted = await this.#connection.runAndReadAll(
      `select count(*) filter (where stored_key is null)::integer as inserted, count(*) filter (where stored_key is not null and replaces)::integer as updated from (select stored.${key[0]} as stored_key, ${olderSql(table, 'stored', 'loaded')} as replaces from ${quote(newest)} loaded left join ${quote(table.name)} stored on ${sameKey})`,
    );
    const { inserted, updated } = counted.getRowObjects()[0] as { inserted: number; updated: number };
    await this.#run(
      `delete from ${quote(table.name)} stored using ${quote(newest)} loaded where ${sameKey} and ${olderSql(table, 'stored', 'loaded')}`,
      { table: table.name, what: 'merge' },
    );
    const names = table.columns.map((column) => quote(column.name)).join(', ');
    await this.#run(
      `insert into ${quote(table.name)} (${names}) select ${names} from ${quote(newest)} loaded where not exists (select 1 from ${quote(table.name)} stored where ${sameKey})`,
      { table: table.name, what: 'merge' },
    );
    await this.#run(`drop table ${quote(newest)}`, { what: 'drop the staging table' });
    await this.#run(`drop table ${quote(stage)}`, { what: 'drop the staging table' });
    const merged = inserted !== rows;
    return { rows, inserted, updated, unchanged: rows - inserted - updated, merged };
  }

  async markGone(table: PgTable, snapshot: Snapshot, at: string): Promise<number> {
    const gone = quote(snapshot.goneColumn);
    const time = `'${at.replaceAll("'", "''")}'::timestamptz`;
    const value = `'${snapshot.value.replaceAll("'", "''")}'`;
    const result = await this.#run(
      `update ${quote(table.name)} set ${gone} = ${time} where ${quote(snapshot.column)} = ${value} and ${gone} is null and ${quote(table.newerBy[0] as string)} < ${time}`,
      { table: table.name, what: 'mark gone' },
    );
    return Number(result.rowsChanged);
  }
}

/** Opens (creating when missing) the DuckDB file at `path`. */
export async function connectDuckdb(path: string): Promise<Destination> {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  try {
    instance = await DuckDBInstance.create(path);
    connection = await instance.connect();
  } catch (error) {
    throw failure(error, { what: `cannot open the DuckDB file ${path}` });
  }
  return {
    async transaction(work) {
      await connection.run('begin transaction').catch((error: unknown) => {
        throw failure(error, { what: 'begin' });
      });
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(new DuckdbTransaction(connection));
      } catch (error) {
        await connection.run('rollback').catch(() => {});
        throw error;
      }
      await connection.run('commit').catch((error: unknown) => {
        throw failure(error, { what: 'commit' });
      });
      return result;
    },
    async close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
