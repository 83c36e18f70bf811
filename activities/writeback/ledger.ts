import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { CrmObject, CrmWriteCheckpoint } from '../../connectors/crm/writer.ts';
import { CrmLedgerError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent, writeBody, writeStream } from '../../connectors/storage/store-io.ts';
import { LedgerRecords, type PendingChange, type RecordValues, type Refusal } from './ledger-db.ts';
import type { WriteBackResult } from './types.ts';
import type { CrmValue } from './values.ts';

/**
 * What the CRM confirmed of a schedule's write-backs, beside its sync state:
 * - `records` (`ledger-db.ts`, a database on the worker's disk, looked up by record id): per record the values the CRM
 *   last confirmed (so a value already there is not written again, and `fill-empty` knows the kit's own value from
 *   one a person typed); the changes not confirmed yet (cut by a crash, an outage, an expired token, a transient
 *   rejection: the next night writes them before its own); permanent refusals, by the values refused (not tried
 *   again until the record's values change);
 * - `checkpoint`: where an unfinished write stood (a Salesforce ingest job's id), resumed, never created twice;
 * - `nights`: each night's result, so a repeated write-back of a night returns it without a CRM call;
 * - the meta `owed`: nights refused before their changes reached the pending table (`owed.ts`), taken first next night.
 *
 * Stored as the database gzipped (`<name>/_writeback/ledger-<sha256>.sqlite.gz`) and a small pointer
 * `<name>/_writeback.json` naming it with its sha256 and schedule, replaced in one step after the database is
 * published: a crash leaves the previous ledger whole. Every read proves it (the pointer's schedule, the object's
 * sha256, the database's tables). A ledger of the release before (version 1: one JSON document, proven by its sha256
 * and schedule) is read and carried into the database.
 */
export interface Ledger {
  name: string;
  records: LedgerRecords;
  checkpoint?: { run: string; object: CrmObject; updates: string; checkpoint: CrmWriteCheckpoint };
  nights: Record<string, WriteBackResult>;
  /** The worker's private folder of the database, removed by `closeLedger`. */
  dir: string;
}

/** The ledger of the release before: one JSON document. */
interface LegacyLedger {
  name: string;
  confirmed: Record<string, RecordValues>;
  pending: Record<string, PendingChange>;
  refused: Record<string, Refusal>;
  checkpoint?: Ledger['checkpoint'];
  nights: Record<string, WriteBackResult>;
}

interface LegacyFile {
  version: 1;
  sha256: string;
  ledger: LegacyLedger;
}

/** What `<name>/_writeback.json` holds now: where the database is, its proof, and what `schedule state` shows. */
interface LedgerPointer {
  version: 2;
  name: string;
  key: string;
  sha256: string;
  bytes: number;
  updated_at: string;
  counts: { confirmed: number; pending: number; refused: number };
  /** Nights whose write-back was refused before their changes reached `pending` (activities/writeback/owed.ts). */
  owed_nights?: string[];
  last_night: (WriteBackResult & { runId: string }) | null;
}

export const ledgerKey = (name: string) => `${name}/_writeback.json`;
const ledgerDbKey = (name: string, sha256: string) => `${name}/_writeback/ledger-${sha256.slice(0, 32)}.sqlite.gz`;

/** Nights whose result the ledger keeps (a repeated write-back is of a recent night). */
const NIGHTS_KEPT = 30;
/** The largest stored ledger database read (gzipped), and how far it may inflate. */
const LEDGER_MAX_STORED_BYTES = 2 * 1024 ** 3;
const LEDGER_MAX_BYTES = 16 * 1024 ** 3;

const legacyProof = (ledger: LegacyLedger) => createHash('sha256').update(JSON.stringify(ledger)).digest('hex');

/** A record's values as one short print (a permanent refusal is tried again only when it changes). */
export function valuesPrint(values: Record<string, CrmValue>): string {
  const sorted = Object.keys(values)
    .sort()
    .map((field) => [field, values[field]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 32);
}

/** The schedule's ledger, opened on this worker's disk (empty when it never wrote back); close it with `closeLedger`. */
export async function readLedger(store: Store, name: string): Promise<Ledger> {
  const key = ledgerKey(name);
  let file: LegacyFile | LedgerPointer | undefined;
  try {
    file = await readJsonIfPresent<LegacyFile | LedgerPointer>(store, key);
  } catch (error) {
    if (error instanceof SyntaxError) throw new CrmLedgerError(key, 'not JSON');
    throw error;
  }
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-ledger-'));
  try {
    if (file === undefined) return openLedger(name, dir, {});
    if (file.version === 2) return await downloadLedger(store, key, name, file, dir);
    return importLegacy(name, checkedLegacy(key, name, file), dir);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function openLedger(name: string, dir: string, from: Partial<Pick<Ledger, 'checkpoint' | 'nights'>>): Ledger {
  const records = new LedgerRecords(join(dir, 'ledger.sqlite'));
  const checkpoint = from.checkpoint ?? records.meta<Ledger['checkpoint']>('checkpoint');
  const nights = from.nights ?? records.meta<Ledger['nights']>('nights') ?? {};
  return { name, records, nights, dir, ...(checkpoint ? { checkpoint } : {}) };
}

function checkedLegacy(key: string, name: string, file: LegacyFile): LegacyLedger {
  if (file.version !== 1 || typeof file.ledger !== 'object' || file.ledger === null) {
    throw new CrmLedgerError(key, 'not a write-back ledger of this version');
  }
  if (file.ledger.name !== name)
    throw new CrmLedgerError(key, `belongs to schedule "${file.ledger.name}", not "${name}"`);
  if (file.sha256 !== legacyProof(file.ledger)) throw new CrmLedgerError(key, 'its checksum does not match its body');
  return file.ledger;
}

function importLegacy(name: string, legacy: LegacyLedger, dir: string): Ledger {
  const ledger = openLedger(name, dir, {
    nights: legacy.nights,
    ...(legacy.checkpoint ? { checkpoint: legacy.checkpoint } : {}),
  });
  ledger.records.transaction(() => {
    for (const [id, values] of Object.entries(legacy.confirmed)) ledger.records.confirm(id, values);
    for (const [id, change] of Object.entries(legacy.pending)) ledger.records.setPending(id, change);
    for (const [id, refusal] of Object.entries(legacy.refused)) ledger.records.refuse(id, refusal);
  });
  return ledger;
}

/** The pointer's database, proven: the schedule's, under its own key, its sha256, capped, its tables there. */
async function downloadLedger(
  store: Store,
  key: string,
  name: string,
  pointer: LedgerPointer,
  dir: string,
): Promise<Ledger> {
  if (typeof pointer.name !== 'string' || typeof pointer.key !== 'string' || typeof pointer.sha256 !== 'string')
    throw new CrmLedgerError(key, 'not a write-back ledger of this version');
  if (pointer.name !== name) throw new CrmLedgerError(key, `belongs to schedule "${pointer.name}", not "${name}"`);
  if (pointer.key !== ledgerDbKey(pointer.name, pointer.sha256))
    throw new CrmLedgerError(key, "names a database outside the schedule's ledger folder");
  const info = await store.stat(pointer.key);
  if (!info) throw new CrmLedgerError(key, `its database ${pointer.key} is missing`);
  if (info.size > LEDGER_MAX_STORED_BYTES)
    throw new CrmLedgerError(key, `its database is larger than ${LEDGER_MAX_STORED_BYTES} bytes`);
  const hash = createHash('sha256');
  let inflated = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const capped = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      done(inflated > LEDGER_MAX_BYTES ? new CrmLedgerError(key, 'its database inflates past its limit') : null, chunk);
    },
  });
  const path = join(dir, 'ledger.sqlite');
  try {
    await pipeline(await store.openRead(pointer.key), hashing, createGunzip(), capped, createWriteStream(path));
  } catch (error) {
    if (error instanceof CrmLedgerError) throw error;
    throw new CrmLedgerError(
      key,
      `its database could not be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (hash.digest('hex') !== pointer.sha256) throw new CrmLedgerError(key, 'its database does not match its sha256');
  const problem = LedgerRecords.check(path);
  if (problem) throw new CrmLedgerError(key, problem);
  const ledger = openLedger(pointer.name, dir, {});
  if (ledger.records.meta<string>('name') !== pointer.name) {
    ledger.records.close();
    throw new CrmLedgerError(key, "its database is not the schedule's");
  }
  return ledger;
}

/**
 * Publishes the ledger: its database gzipped under a key from its sha256 (through a local file, so that the sha256
 * is known before the key), then the pointer naming it; the database the pointer named before is deleted after.
 */
export async function writeLedger(store: Store, ledger: Ledger): Promise<void> {
  const runs = Object.keys(ledger.nights).sort();
  for (const run of runs.slice(0, Math.max(0, runs.length - NIGHTS_KEPT))) delete ledger.nights[run];
  const { records } = ledger;
  records.setMeta('name', ledger.name);
  records.setMeta('checkpoint', ledger.checkpoint);
  records.setMeta('nights', ledger.nights);
  const gz = join(ledger.dir, 'ledger.sqlite.gz');
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(createReadStream(join(ledger.dir, 'ledger.sqlite')), createGzip(), hashing, createWriteStream(gz));
  const sha256 = hash.digest('hex');
  const key = ledgerDbKey(ledger.name, sha256);
  const bytes = (await stat(gz)).size;
  if (!(await store.stat(key)))
    await writeStream(store, key, createReadStream(gz), { contentType: 'application/gzip' });
  const before = await readJsonIfPresent<LegacyFile | LedgerPointer>(store, ledgerKey(ledger.name)).catch(
    () => undefined,
  );
  const pointer: LedgerPointer = {
    version: 2,
    name: ledger.name,
    key,
    sha256,
    bytes,
    updated_at: new Date().toISOString(),
    counts: {
      confirmed: records.count('confirmed'),
      pending: records.count('pending'),
      refused: records.count('refused'),
    },
    owed_nights: (records.meta<{ runId: string }[]>('owed') ?? []).map((night) => night.runId),
    last_night: lastNight(ledger.nights),
  };
  await writeBody(store, ledgerKey(ledger.name), `${JSON.stringify(pointer, null, 2)}\n`, {
    contentType: 'application/json',
  });
  if (before?.version === 2 && before.key !== key && before.key === ledgerDbKey(ledger.name, before.sha256))
    await store.delete(before.key).catch(() => undefined);
}

function lastNight(nights: Ledger['nights']): LedgerPointer['last_night'] {
  const runId = Object.keys(nights).sort().at(-1);
  if (runId === undefined) return null;
  const { report: _report, ...last } = nights[runId] as WriteBackResult;
  return { runId, ...last };
}

/** Closes the ledger's database and removes its private folder. */
export async function closeLedger(ledger: Ledger): Promise<void> {
  ledger.records.close();
  await rm(ledger.dir, { recursive: true, force: true });
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
  /** Nights owed whole (their write-back refused before their changes were taken): the next night writes them first. */
  owedNights: string[];
}

/**
 * The schedule's write-back as its ledger's pointer says (the database itself is not read); null when it never wrote
 * back, `unreadable` when the pointer does not prove itself. A ledger of the release before is read whole.
 */
export async function writeBackState(
  store: Store,
  name: string,
): Promise<WriteBackState | { unreadable: string } | null> {
  const key = ledgerKey(name);
  let file: LegacyFile | LedgerPointer | undefined;
  try {
    file = await readJsonIfPresent<LegacyFile | LedgerPointer>(store, key);
    if (file === undefined) return null;
    if (file.version === 2) {
      if (file.name !== name) throw new CrmLedgerError(key, `belongs to schedule "${file.name}", not "${name}"`);
      return {
        ledger: store.urlOf(key),
        lastNight: file.last_night,
        ...file.counts,
        owedNights: file.owed_nights ?? [],
      };
    }
    const legacy = checkedLegacy(key, name, file);
    return {
      ledger: store.urlOf(key),
      lastNight: lastNight(legacy.nights),
      pending: Object.keys(legacy.pending).length,
      refused: Object.keys(legacy.refused).length,
      confirmed: Object.keys(legacy.confirmed).length,
      owedNights: [],
    };
  } catch (error) {
    if (error instanceof CrmLedgerError) return { unreadable: error.message };
    if (error instanceof SyntaxError) return { unreadable: `write-back ledger ${key}: not JSON` };
    throw error;
  }
}
