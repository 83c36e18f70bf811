/**
 * A night whose write-back was refused before its changes reached the ledger's `pending` (a HubSpot token expired
 * since the night's pre-flight, a worker without the CRM's settings: the write-back's own pre-flight fails first) is
 * owed: the ledger names it, and the next night reads its `changes.csv` into `pending` (typed for the fields as they
 * are then) before its own changes, so nothing of it is lost. A night's changes the next one changed again are
 * written with the newer values.
 */

import type { Store } from '../../connectors/storage/store.ts';
import { syncChangesKey } from '../sync/layout.ts';
import type { SyncKind, SyncRunRef } from '../sync/types.ts';
import { type ChangedRecord, readChangedRecords } from './changes.ts';
import { type Ledger, writeLedger } from './ledger.ts';
import type { CrmValue } from './values.ts';

/** Records the night as owed (its changes not read into the ledger yet), then lets the caller rethrow. */
export async function oweNight(store: Store, ledger: Ledger, run: SyncRunRef): Promise<void> {
  ledger.records.setMeta('owed', [...owedNights(ledger).filter((owed) => owed.runId !== run.runId), run]);
  await writeLedger(store, ledger);
}

/** The nights the ledger owes (kept in its database's meta table). */
export const owedNights = (ledger: Ledger): SyncRunRef[] => ledger.records.meta<SyncRunRef[]>('owed') ?? [];

/**
 * The changes of the nights owed before `runId`, typed by `type`, put in `pending` (older nights first, so a record
 * changed twice keeps its newer values); the list of owed nights is emptied. A night whose `changes.csv` is gone is
 * skipped. Returns how many records were taken.
 */
export async function takeOwed(
  store: Store,
  ledger: Ledger,
  runId: string,
  kind: SyncKind,
  columns: readonly string[],
  type: (records: readonly ChangedRecord[]) => { id: string; values: Record<string, CrmValue> }[],
): Promise<number> {
  const owed = owedNights(ledger)
    .filter((night) => night.runId < runId)
    .sort((a, b) => (a.runId < b.runId ? -1 : 1));
  let taken = 0;
  for (const night of owed) {
    const key = syncChangesKey(night);
    if (!(await store.exists(key))) continue;
    const { records } = await readChangedRecords(store, key, kind, columns);
    for (const record of type(records)) {
      ledger.records.setPending(record.id, { values: record.values, from: night.runId });
      taken += 1;
    }
  }
  if (owed.length > 0 || owedNights(ledger).length > 0) ledger.records.setMeta('owed', undefined);
  return taken;
}
