import { createHash } from 'node:crypto';
import type { CrmObject, CrmWriteCheckpoint } from '../../connectors/crm/writer.ts';
import { CrmLedgerError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent, writeBody } from '../../connectors/storage/store-io.ts';
import type { WriteBackResult } from './types.ts';
import type { CrmValue } from './values.ts';

/**
 * What the CRM confirmed of a schedule's write-backs, beside its sync state (`<name>/_writeback.json`):
 * - `confirmed`: per record, the values the CRM last confirmed (so a value already there is not written again, and
 *   `fill-empty` knows the kit's own value from one a person typed);
 * - `pending`: changes not confirmed yet (cut by a crash, an outage, an expired token, a transient rejection): the
 *   next night writes them before its own;
 * - `refused`: permanent rejections, by the values refused: not tried again until the record's values change;
 * - `checkpoint`: where an unfinished write stood (a Salesforce ingest job's id), resumed, never created twice;
 * - `nights`: each night's result, so a repeated write-back of a night returns it without a CRM call.
 * It proves itself like a part: its sha256 over its body and the schedule it belongs to, checked on every read.
 */
export interface Ledger {
  name: string;
  confirmed: Record<string, Record<string, CrmValue>>;
  pending: Record<string, { values: Record<string, CrmValue>; from: string }>;
  refused: Record<string, { print: string; code: string; message: string; run: string }>;
  checkpoint?: { run: string; object: CrmObject; updates: string; checkpoint: CrmWriteCheckpoint };
  nights: Record<string, WriteBackResult>;
}

interface LedgerFile {
  version: 1;
  sha256: string;
  ledger: Ledger;
}

export const ledgerKey = (name: string) => `${name}/_writeback.json`;

/** Nights whose result the ledger keeps (a repeated write-back is of a recent night). */
const NIGHTS_KEPT = 30;

export const emptyLedger = (name: string): Ledger => ({ name, confirmed: {}, pending: {}, refused: {}, nights: {} });

const proof = (ledger: Ledger) => createHash('sha256').update(JSON.stringify(ledger)).digest('hex');

/** A record's values as one short print (a permanent refusal is tried again only when it changes). */
export function valuesPrint(values: Record<string, CrmValue>): string {
  const sorted = Object.keys(values)
    .sort()
    .map((field) => [field, values[field]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 32);
}

export async function readLedger(store: Store, name: string): Promise<Ledger> {
  const key = ledgerKey(name);
  let file: LedgerFile | undefined;
  try {
    file = await readJsonIfPresent<LedgerFile>(store, key);
  } catch (error) {
    if (error instanceof SyntaxError) throw new CrmLedgerError(key, 'not JSON');
    throw error;
  }
  if (file === undefined) return emptyLedger(name);
  if (file.version !== 1 || typeof file.ledger !== 'object' || file.ledger === null) {
    throw new CrmLedgerError(key, 'not a write-back ledger of this version');
  }
  if (file.ledger.name !== name)
    throw new CrmLedgerError(key, `belongs to schedule "${file.ledger.name}", not "${name}"`);
  if (file.sha256 !== proof(file.ledger)) throw new CrmLedgerError(key, 'its checksum does not match its body');
  return file.ledger;
}

export async function writeLedger(store: Store, ledger: Ledger): Promise<void> {
  const runs = Object.keys(ledger.nights).sort();
  for (const run of runs.slice(0, Math.max(0, runs.length - NIGHTS_KEPT))) delete ledger.nights[run];
  const file: LedgerFile = { version: 1, sha256: proof(ledger), ledger };
  await writeBody(store, ledgerKey(ledger.name), Buffer.from(JSON.stringify(file)), {
    contentType: 'application/json',
  });
}

/** What `schedule state` shows of a schedule's write-back. */
export interface WriteBackState {
  ledger: string;
  /** The last night written back, as it ended. */
  lastNight: (WriteBackResult & { runId: string }) | null;
  /** Records whose change the CRM has not confirmed yet: the next night writes them first. */
  pending: number;
  /** Records the CRM refused for good, not tried again until their values change. */
  refused: number;
  /** Records whose values the CRM confirmed. */
  confirmed: number;
}

/** The schedule's write-back as its ledger has it; null when it never wrote back, `unreadable` when it does not prove itself. */
export async function writeBackState(
  store: Store,
  name: string,
): Promise<WriteBackState | { unreadable: string } | null> {
  let ledger: Ledger;
  try {
    ledger = await readLedger(store, name);
  } catch (error) {
    if (error instanceof CrmLedgerError) return { unreadable: error.message };
    throw error;
  }
  const runId = Object.keys(ledger.nights).sort().at(-1);
  const pending = Object.keys(ledger.pending).length;
  if (runId === undefined && pending === 0) return null;
  const { report: _report, ...last } =
    runId === undefined ? ({} as WriteBackResult) : (ledger.nights[runId] as WriteBackResult);
  return {
    ledger: store.urlOf(ledgerKey(name)),
    lastNight: runId === undefined ? null : { runId, ...last },
    pending,
    refused: Object.keys(ledger.refused).length,
    confirmed: Object.keys(ledger.confirmed).length,
  };
}
