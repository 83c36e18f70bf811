/**
 * Where a load writes: one interface, two destinations. Each takes the plan's tables (tables.ts) and the COPY text
 * of their parts (sources.ts), and gives the same semantics and the same report: a key keeps its newest version
 * (`newerBy`), loading the same data again changes nothing, an older load never undoes a newer one, and a snapshot
 * table marks the rows of its scope a newer load did not bring. All of a load is one transaction.
 */
import type { CopyInput, PgTable, UpsertResult } from '../connectors/postgres/index.ts';
import type { Snapshot } from './tables.ts';

export interface DestinationTx {
  /** Creates the table when missing; adds the nullable columns an older table lacks. */
  ensureTable(table: PgTable): Promise<void>;
  /** Upserts the sources into `table` by its key, each key keeping its newest version. */
  upsert(table: PgTable, input: CopyInput): Promise<UpsertResult>;
  /** Marks gone (at `at`) the rows of the snapshot's scope older than `at` and not marked yet; how many. */
  markGone(table: PgTable, snapshot: Snapshot, at: string): Promise<number>;
}

export interface Destination {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: DestinationTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
