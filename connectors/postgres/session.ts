/**
 * A connection to PostgreSQL that loads tables by key: `COPY` for the bytes, `INSERT … ON CONFLICT DO UPDATE` for the
 * merge, all inside one transaction the caller opens. It knows tables, not jobs.
 *
 * An upsert first tries the cheap way: `COPY` straight into the table under a savepoint. That succeeds whenever none
 * of the loaded keys is there yet (a first load, an incremental run's new signals) and then costs what a plain `COPY`
 * costs. When a key is already there (or comes twice), the server refuses with a unique violation: the savepoint is
 * rolled back and the sources are copied into a temporary staging table, then merged, each key keeping its newest
 * version (`PgTable.newerBy`).
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DatabaseError, KitError } from '../errors.ts';
import { connectionAttempts } from './connection.ts';
import { addColumnsSql, createTableSql, type PgTable, quote, writableColumns } from './table.ts';

/** What a COPY reads: one source (a part), named for errors. */
export interface CopySource {
  name: string;
  body: Readable;
}

export interface CopyInput {
  /** The columns the sources hold, in their order (table columns; generated ones are never among them). */
  columns: readonly string[];
  /** `csv`: RFC 4180 with a header line, empty unquoted fields null. `text`: COPY's text format, no header. */
  format: 'csv' | 'text';
  /** The sources from the start, each time it is called: a load that has to merge reads them a second time. */
  open: () => AsyncIterable<CopySource>;
}

export interface UpsertResult {
  /** Rows read from the sources. */
  rows: number;
  inserted: number;
  /** Stored rows replaced by a newer version. */
  updated: number;
  /** Rows that changed nothing: already there as new or newer, or an older duplicate within this load. */
  unchanged: number;
  /** Whether the load had to merge (some key was already there or came twice) rather than only append. */
  merged: boolean;
}

const UNIQUE_VIOLATION = '23505';

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

function toDatabaseError(error: unknown, context: { table?: string; part?: string; what?: string }): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const e = error as { message?: string; code?: string; table?: string; constraint?: string; detail?: string };
  const sqlstate = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
  const message = `${context.what ? `${context.what}: ` : ''}${e.message ?? String(error)}${e.detail ? ` — ${e.detail}` : ''}`;
  return new DatabaseError(message, {
    ...(sqlstate ? { code: sqlstate } : {}),
    ...((e.table ?? context.table) ? { table: (e.table ?? context.table) as string } : {}),
    ...(e.constraint ? { constraint: e.constraint } : {}),
    ...(context.part ? { part: context.part } : {}),
    cause: error,
  });
}

export class PostgresTransaction {
  readonly #client: pg.Client;
  #staged = 0;

  constructor(client: pg.Client) {
    this.#client = client;
  }

  async #query(sql: string, context: { table?: string; what?: string } = {}) {
    try {
      return await this.#client.query(sql);
    } catch (error) {
      throw toDatabaseError(error, context);
    }
  }

  /** Creates the table when missing; adds the nullable columns an older table lacks. */
  async ensureTable(table: PgTable): Promise<void> {
    await this.#query(createTableSql(table), { table: table.name, what: 'create table' });
    for (const sql of addColumnsSql(table)) await this.#query(sql, { table: table.name, what: 'add column' });
  }

  /** Upserts the sources into `table` by its key, each key keeping its newest version. */
  async upsert(table: PgTable, input: CopyInput): Promise<UpsertResult> {
    const known = new Set(writableColumns(table).map((column) => column.name));
    const unknown = input.columns.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new DatabaseError(`the load holds columns table ${table.name} does not have: ${unknown.join(', ')}`, {
        table: table.name,
      });
    }
    await this.#query('savepoint signal_kit_append');
    try {
      const rows = await this.#copyAll(table.name, table.name, input);
      await this.#query('release savepoint signal_kit_append');
      return { rows, inserted: rows, updated: 0, unchanged: 0, merged: false };
    } catch (error) {
      if (!(error instanceof DatabaseError && error.code === UNIQUE_VIOLATION)) throw error;
      await this.#query('rollback to savepoint signal_kit_append');
    }
    return this.#merge(table, input);
  }

  /**
   * Marks gone (`snapshot.goneColumn` set to `at`) the rows whose `snapshot.column` is `snapshot.value`, that a load
   * of time `at` did not bring (their first `newerBy` column, the load's time, is older) and not marked yet; how many.
   */
  async markGone(
    table: PgTable,
    snapshot: { column: string; value: string; goneColumn: string },
    at: string,
  ): Promise<number> {
    const gone = quote(snapshot.goneColumn);
    const sql = `update ${quote(table.name)} set ${gone} = $1::timestamptz where ${quote(snapshot.column)} = $2 and ${gone} is null and ${quote(table.newerBy[0] as string)} < $1::timestamptz`;
    try {
      return (await this.#client.query(sql, [at, snapshot.value])).rowCount ?? 0;
    } catch (error) {
      throw toDatabaseError(error, { table: table.name, what: 'mark gone' });
    }
  }

  async #merge(table: PgTable, input: CopyInput): Promise<UpsertResult> {
    const stage = `signal_kit_stage_${++this.#staged}`;
    await this.#query(
      `create temporary table ${quote(stage)} (like ${quote(table.name)} including defaults including generated) on commit drop`,
      { table: table.name, what: 'create the staging table' },
    );
    const rows = await this.#copyAll(stage, table.name, input);
    const columns = writableColumns(table).map((column) => quote(column.name));
    const key = table.key.map(quote);
    const order = [...key, ...table.newerBy.map((name) => `${quote(name)} desc nulls last`), ...(table.tieBreak ?? [])];
    const keySet = new Set(table.key);
    const updates = writableColumns(table)
      .filter((column) => !keySet.has(column.name))
      .map((column) => `${quote(column.name)} = excluded.${quote(column.name)}`);
    // A version without a time is older than any with one (a comparison with null would decide nothing).
    const types = new Map(table.columns.map((column) => [column.name, column.type]));
    const newerTerm = (alias: string, name: string) =>
      types.get(name) === 'timestamptz'
        ? `coalesce(${alias}.${quote(name)}, '-infinity'::timestamptz)`
        : `${alias}.${quote(name)}`;
    const newer = (alias: string) => `(${table.newerBy.map((name) => newerTerm(alias, name)).join(', ')})`;
    const sql = `with written as (
  insert into ${quote(table.name)} as stored (${columns.join(', ')})
  select ${columns.join(', ')} from (select distinct on (${key.join(', ')}) * from ${quote(stage)} order by ${order.join(', ')}) newest
  on conflict (${key.join(', ')}) do update set ${updates.join(', ')}
  where ${newer('stored')} < ${newer('excluded')}
  returning (xmax = 0) as inserted
)
select count(*) filter (where inserted)::int as inserted, count(*) filter (where not inserted)::int as updated from written`;
    const result = await this.#query(sql, { table: table.name, what: 'merge' });
    await this.#query(`drop table ${quote(stage)}`);
    const { inserted, updated } = result.rows[0] as { inserted: number; updated: number };
    return { rows, inserted, updated, unchanged: rows - inserted - updated, merged: true };
  }

  /** One COPY per source into `target`; the number of rows copied. */
  async #copyAll(target: string, table: string, input: CopyInput): Promise<number> {
    const columns = input.columns.map(quote).join(', ');
    const options = input.format === 'csv' ? '(format csv, header true)' : '(format text)';
    const sql = `copy ${quote(target)} (${columns}) from stdin ${options}`;
    let rows = 0;
    for await (const source of input.open()) {
      const copy = copyFrom(sql);
      try {
        await pipeline(source.body, this.#client.query(copy));
      } catch (error) {
        // A source that could not be read (its own typed error) is not the database's failure.
        if (error instanceof KitError && !(error instanceof DatabaseError)) throw error;
        throw toDatabaseError(error, { table, part: source.name, what: 'copy' });
      }
      rows += copy.rowCount;
    }
    return rows;
  }
}

export interface PostgresSession {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: PostgresTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A connected client, trying each of libpq's attempts for the URL's `sslmode` in turn (connection.ts). */
async function connectClient(url: string): Promise<pg.Client> {
  let failure: unknown;
  for (const config of connectionAttempts(url)) {
    const client = new pg.Client(config);
    // A client error outside a query (the server closing the connection) must not crash the process.
    client.on('error', () => {});
    try {
      await client.connect();
      // Staging tables live in the session's temporary buffers: room for a large load before they spill to disk.
      await client.query(`set temp_buffers = '256MB'`);
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      failure = error;
    }
  }
  throw toDatabaseError(failure, { what: `cannot connect to ${redactUrl(url)}` });
}

/**
 * Connects (`postgres://` or `postgresql://` URL, with libpq's `sslmode` and `sslrootcert`; the password from the URL,
 * `PGPASSWORD` or the password file).
 */
export async function connectPostgres(url: string): Promise<PostgresSession> {
  const client = await connectClient(url);
  return {
    async transaction(work) {
      const tx = new PostgresTransaction(client);
      try {
        await client.query('begin');
      } catch (error) {
        throw toDatabaseError(error, { what: 'begin' });
      }
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(tx);
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
      try {
        await client.query('commit');
      } catch (error) {
        throw toDatabaseError(error, { what: 'commit' });
      }
      return result;
    },
    async close() {
      await client.end().catch(() => {});
    },
  };
}
