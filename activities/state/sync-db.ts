import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import type { CompanyState } from './sync-rules.ts';
import { companyStateSchema, latestTimeAllowed } from './sync-rules.ts';

/**
 * The sync's state as an embedded database file (`node:sqlite`), opened from a private local file: a night reads a
 * company, a record's fingerprint or a resolution by key, and writes them back, without ever holding the whole state.
 *
 *   meta(key, value)                 version, name, run_id
 *   companies(domain, status, through, company, contact, counts, newest, ids)   JSON in the object columns
 *   records(key, print, label)       a record's key, the fingerprint of its last row, its id as the export wrote it
 *   resolved(key, domain)            a LinkedIn page or name → the company's domain it resolved to
 *   tonight(key, print, label)       the records of the night being written (moved into `records` at its end)
 */
export const STATE_DB_VERSION = '2';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS companies (domain TEXT PRIMARY KEY, status TEXT NOT NULL, through TEXT, company TEXT,
  contact TEXT, counts TEXT NOT NULL, newest TEXT, ids TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (key TEXT PRIMARY KEY, print TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS resolved (key TEXT PRIMARY KEY, domain TEXT NOT NULL);
`;
const TABLES = { meta: 2, companies: 8, records: 3, resolved: 2 } as const;

interface CompanyRow {
  domain: string;
  status: string;
  through: string | null;
  company: string | null;
  contact: string | null;
  counts: string;
  newest: string | null;
  ids: string;
}

export class StateDb {
  readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  private constructor(path: string) {
    this.db = new DatabaseSync(path);
    // A private file of one writer: no journal to fsync for each transaction.
    this.db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16000;');
  }

  /** A new, empty state (a schedule's first night, or a state ignored). */
  static create(path: string, name: string, runId: string | null): StateDb {
    const state = new StateDb(path);
    state.db.exec(SCHEMA);
    state.setMeta('version', STATE_DB_VERSION);
    state.setMeta('name', name);
    if (runId !== null) state.setMeta('run_id', runId);
    return state;
  }

  /** A state database file as found (check it with `stateDbProblem` before trusting it). */
  static open(path: string): StateDb {
    return new StateDb(path);
  }

  private statement(sql: string): StatementSync {
    let found = this.statements.get(sql);
    if (!found) {
      found = this.db.prepare(sql);
      this.statements.set(sql, found);
    }
    return found;
  }

  meta(key: string): string | undefined {
    const row = this.statement('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.statement('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  get runId(): string | null {
    return this.meta('run_id') ?? null;
  }

  company(domain: string): CompanyState | undefined {
    const row = this.statement('SELECT * FROM companies WHERE domain = ?').get(domain) as CompanyRow | undefined;
    return row ? companyOfRow(row) : undefined;
  }

  putCompany(domain: string, state: CompanyState): void {
    this.statement(
      'INSERT OR REPLACE INTO companies (domain, status, through, company, contact, counts, newest, ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      domain,
      state.status,
      state.through,
      state.company ? JSON.stringify(state.company) : null,
      state.contact ? JSON.stringify(state.contact) : null,
      JSON.stringify(state.counts),
      state.newest ? JSON.stringify(state.newest) : null,
      JSON.stringify(state.ids),
    );
  }

  companyCount(): number {
    return (this.statement('SELECT count(*) AS n FROM companies').get() as { n: number }).n;
  }

  resolvedDomain(key: string): string | undefined {
    const row = this.statement('SELECT domain FROM resolved WHERE key = ?').get(key) as { domain: string } | undefined;
    return row?.domain;
  }

  putResolved(key: string, domain: string): void {
    this.statement('INSERT OR REPLACE INTO resolved (key, domain) VALUES (?, ?)').run(key, domain);
  }

  recordPrint(key: string): string | undefined {
    const row = this.statement('SELECT print FROM records WHERE key = ?').get(key) as { print: string } | undefined;
    return row?.print;
  }

  /** Starts the night's records (`tonight`), replaced into `records` by `keepTonight`. */
  startTonight(): void {
    this.db.exec('DROP TABLE IF EXISTS tonight; CREATE TABLE tonight (key TEXT PRIMARY KEY, print TEXT, label TEXT);');
  }

  hasTonight(key: string): boolean {
    return this.statement('SELECT 1 FROM tonight WHERE key = ?').get(key) !== undefined;
  }

  putTonight(key: string, print: string, label: string): void {
    this.statement('INSERT OR REPLACE INTO tonight (key, print, label) VALUES (?, ?, ?)').run(key, print, label);
  }

  /** The records of the state that are not in tonight's export, as the export wrote their ids, in key order. */
  *goneRecords(): Generator<{ key: string; label: string }> {
    const query = this.db.prepare(
      'SELECT key, label FROM records WHERE key NOT IN (SELECT key FROM tonight) ORDER BY key',
    );
    for (const row of query.iterate()) yield row as { key: string; label: string };
  }

  keepTonight(): void {
    this.db.exec(
      'BEGIN; DELETE FROM records; INSERT INTO records SELECT key, print, label FROM tonight; DROP TABLE tonight; COMMIT;',
    );
  }

  /** Runs `step` in one transaction (a batch of writes at the cost of one). */
  transaction<T>(step: () => T): T {
    this.db.exec('BEGIN');
    try {
      const result = step();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** A compact copy of the state at `path` (what is published). */
  saveTo(path: string): void {
    this.db.prepare('VACUUM INTO ?').run(path);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

function companyOfRow(row: CompanyRow): CompanyState {
  return {
    status: row.status as CompanyState['status'],
    through: row.through,
    ...(row.company ? { company: JSON.parse(row.company) as CompanyState['company'] } : {}),
    ...(row.contact ? { contact: JSON.parse(row.contact) as Record<string, unknown> } : {}),
    counts: JSON.parse(row.counts) as Record<string, number>,
    newest: row.newest ? (JSON.parse(row.newest) as CompanyState['newest']) : null,
    ids: JSON.parse(row.ids) as [string, string][],
  };
}

/**
 * Rows checked between two turns of the event loop: the database is synchronous, and a worker whose loop is held
 * sends no heartbeat (a million rows would hold it for seconds).
 */
const YIELD_EVERY = 1_000;

const recordRow = z.object({ key: z.string(), print: z.string().regex(/^[0-9a-f]{32}$/), label: z.string() });
const resolvedRow = z.object({ key: z.string(), domain: z.string() });

/**
 * Why a state database may not be trusted by the night at `nightAt`, or undefined: its tables and version, its name
 * and run, then every row under the rules of `sync-rules.ts`. The reason names the table, the row number and the
 * field, never a value found there.
 */
export async function stateDbProblem(
  state: StateDb,
  expected: { name: string; runId: string },
  nightAt: string,
): Promise<string | undefined> {
  try {
    for (const [table, columns] of Object.entries(TABLES)) {
      const found = state.db.prepare(`SELECT count(*) AS n FROM pragma_table_info('${table}')`).get() as { n: number };
      if (found.n !== columns) return `its table ${table} is missing or not the state's`;
    }
    if (state.meta('version') !== STATE_DB_VERSION) return 'its version is not one this kit reads';
    if (state.meta('name') !== expected.name) return "it is not this schedule's state (meta.name)";
    if (state.meta('run_id') !== expected.runId)
      return 'it was not committed by the run its pointer names (meta.run_id)';
    // One schema for every row: building it per row compiled a validator per company, holding the worker's loop for
    // seconds at 10,000 companies (its activities' heartbeats lapsed and their calls were retried while in flight).
    const schema = companyStateSchema(latestTimeAllowed(nightAt));
    let n = 0;
    for (const row of state.db.prepare('SELECT * FROM companies').iterate()) {
      n += 1;
      if (n % YIELD_EVERY === 0) await yieldToLoop();
      const problem = companyProblem(companyRowOf(row), schema);
      if (problem) return `companies row ${n}: ${problem}`;
    }
    n = 0;
    for (const row of state.db.prepare('SELECT * FROM records').iterate()) {
      n += 1;
      if (n % YIELD_EVERY === 0) await yieldToLoop();
      if (!recordRow.safeParse(row).success) return `records row ${n}: not a record's key and fingerprint`;
    }
    n = 0;
    for (const row of state.db.prepare('SELECT * FROM resolved').iterate()) {
      n += 1;
      if (n % YIELD_EVERY === 0) await yieldToLoop();
      if (!resolvedRow.safeParse(row).success) return `resolved row ${n}: not a key and a domain`;
    }
    return undefined;
  } catch {
    return 'it is not a readable state database';
  }
}

function companyRowOf(row: unknown): unknown {
  try {
    return companyOfRow(row as CompanyRow);
  } catch {
    return undefined;
  }
}

function companyProblem(value: unknown, schema: ReturnType<typeof companyStateSchema>): string | undefined {
  if (value === undefined) return 'its JSON columns do not parse';
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  // Only the field's name: a deeper path holds the state's own keys (a signal type, a domain).
  return issue ? `${String(issue.path[0] ?? 'value')}: ${issue.message}` : 'invalid';
}
