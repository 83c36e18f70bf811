import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { CrmValue } from './values.ts';

/**
 * The per-record part of a schedule's write-back ledger as an embedded database file (`node:sqlite`) on the worker's
 * disk: a night looks a record up and writes it back by id, never holding every record the CRM ever confirmed.
 *
 *   meta(key, value)                   name, checkpoint, nights (small JSON)
 *   confirmed(id, vals)                the values the CRM last confirmed of a record
 *   pending(id, vals, from_run)        changes not confirmed yet, and the night they are from
 *   refused(id, print, code, message, run)   permanent refusals, by the print of the values refused
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS confirmed (id TEXT PRIMARY KEY, vals TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pending (id TEXT PRIMARY KEY, vals TEXT NOT NULL, from_run TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refused (id TEXT PRIMARY KEY, print TEXT NOT NULL, code TEXT NOT NULL,
  message TEXT NOT NULL, run TEXT NOT NULL);
`;

export type RecordValues = Record<string, CrmValue>;
export interface PendingChange {
  values: RecordValues;
  from: string;
}
export interface Refusal {
  print: string;
  code: string;
  message: string;
  run: string;
}

export class LedgerRecords {
  readonly #db: DatabaseSync;
  readonly #q: Record<string, StatementSync>;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(SCHEMA);
    const q = (sql: string) => this.#db.prepare(sql);
    this.#q = {
      meta: q('SELECT value FROM meta WHERE key = ?'),
      setMeta: q('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      dropMeta: q('DELETE FROM meta WHERE key = ?'),
      confirmed: q('SELECT vals FROM confirmed WHERE id = ?'),
      confirm: q('INSERT OR REPLACE INTO confirmed (id, vals) VALUES (?, ?)'),
      pending: q('SELECT vals, from_run FROM pending WHERE id = ?'),
      allPending: q('SELECT id, vals, from_run FROM pending ORDER BY id'),
      setPending: q('INSERT OR REPLACE INTO pending (id, vals, from_run) VALUES (?, ?, ?)'),
      dropPending: q('DELETE FROM pending WHERE id = ?'),
      refused: q('SELECT print, code, message, run FROM refused WHERE id = ?'),
      refuse: q('INSERT OR REPLACE INTO refused (id, print, code, message, run) VALUES (?, ?, ?, ?, ?)'),
      dropRefused: q('DELETE FROM refused WHERE id = ?'),
    };
  }

  /** Whether the file is a ledger database at all (its tables answer). */
  static check(path: string): string | undefined {
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(path, { readOnly: true });
      for (const table of ['meta', 'confirmed', 'pending', 'refused'])
        db.prepare(`SELECT count(*) AS n FROM ${table}`).get();
      return undefined;
    } catch (error) {
      return `not a ledger database (${error instanceof Error ? error.message : String(error)})`;
    } finally {
      db?.close();
    }
  }

  meta<T>(key: string): T | undefined {
    const row = this.#q['meta']!.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  setMeta(key: string, value: unknown): void {
    if (value === undefined) this.#q['dropMeta']!.run(key);
    else this.#q['setMeta']!.run(key, JSON.stringify(value));
  }

  confirmed(id: string): RecordValues | undefined {
    const row = this.#q['confirmed']!.get(id) as { vals: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.vals) as RecordValues);
  }

  /** The values the CRM confirmed, over those it confirmed before. */
  confirm(id: string, values: RecordValues): void {
    this.#q['confirm']!.run(id, JSON.stringify({ ...(this.confirmed(id) ?? {}), ...values }));
  }

  pending(id: string): PendingChange | undefined {
    const row = this.#q['pending']!.get(id) as { vals: string; from_run: string } | undefined;
    return row === undefined ? undefined : { values: JSON.parse(row.vals) as RecordValues, from: row.from_run };
  }

  /** Every pending change, one at a time, in id order. */
  *allPending(): Generator<[string, PendingChange]> {
    for (const row of this.#q['allPending']!.iterate() as Iterable<{ id: string; vals: string; from_run: string }>)
      yield [row.id, { values: JSON.parse(row.vals) as RecordValues, from: row.from_run }];
  }

  setPending(id: string, change: PendingChange): void {
    this.#q['setPending']!.run(id, JSON.stringify(change.values), change.from);
  }

  dropPending(id: string): void {
    this.#q['dropPending']!.run(id);
  }

  refused(id: string): Refusal | undefined {
    return this.#q['refused']!.get(id) as Refusal | undefined;
  }

  refuse(id: string, refusal: Refusal): void {
    this.#q['refuse']!.run(id, refusal.print, refusal.code, refusal.message, refusal.run);
  }

  dropRefused(id: string): void {
    this.#q['dropRefused']!.run(id);
  }

  count(table: 'confirmed' | 'pending' | 'refused'): number {
    return Number((this.#db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  }

  /** Many changes in one transaction (a night's outcomes). */
  transaction(work: () => void): void {
    this.#db.exec('BEGIN');
    try {
      work();
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
