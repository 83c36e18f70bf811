import { DatabaseSync } from 'node:sqlite';
import { Context } from '@temporalio/activity';
import { InputError } from '../../connectors/errors.ts';
import { type ColumnChoice, describeChoice } from '../../connectors/normalize/columns.ts';
import { CONTACT_BATCH, MAX_BULK_ENRICH_DOMAINS } from '../../connectors/signal-api/limits.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { columnRequest, identifyRecord } from '../input/identify.ts';
import { type InputRecord, openInput, readInputRecords } from '../input/read-input.ts';
import { openScratch, type Scratch } from '../run/part-files.ts';
import { planKey } from '../run/scheduled-layout.ts';
import { markSyncRunOpen } from '../state/stopped-run.ts';
import type { StateDb } from '../state/sync-db.ts';
import { openSyncState } from '../state/sync-state.ts';
import { carryOnStoppedRun } from './carry-on.ts';
import { syncBatchKey, syncRecordsKey, syncResolvedKey, syncResolveKey, syncStageKey } from './layout.ts';
import { openGzipLines, readGzipLines } from './records-file.ts';
import type {
  PrepareSyncRequest,
  SyncBatch,
  SyncBatchCompany,
  SyncLookup,
  SyncPlan,
  SyncRecord,
  SyncRunRef,
} from './types.ts';

export type { SyncRecord };

/** Records named only by a LinkedIn URL or a name, resolved per batch: about 4 s of calls at 300 a minute. */
export const RESOLVE_BATCH = 20;
/**
 * The most records a night reads from its export (docs/nightly-crm-enrichment.md#limits): an export past it fails
 * the night with the reason before any paid call.
 */
export const MAX_SYNC_RECORDS = 5_000_000;
const JSON_TYPE = { contentType: 'application/json' };

/**
 * Plans a run: reads the export afresh as a stream and matches its rows as `enrich` does, writing each record to the
 * run's records file as it comes (the export is never held whole); then carries on a run that stopped before its
 * commit (its saved answers are taken into the state, so nothing it paid for is asked again) and names the
 * identifiers to resolve; then packs the export's companies into bulk calls by where each is complete through (as a
 * push packs its watermarks): a company the state holds is asked only after that time, a new one for its full answer.
 *
 * An export that cannot be read, or holds more than `MAX_SYNC_RECORDS`, throws before anything is written or paid
 * for. Idempotent: `_plan.json` is written last and returned as is by a repeated plan.
 */
export async function prepareSyncRun(
  openStore: (url: string) => Store,
  request: PrepareSyncRequest,
): Promise<SyncPlan> {
  const { run } = request;
  const out = openStore(run.output);
  const planned =
    (await readJsonIfPresent<SyncPlan>(out, planKey(run))) ??
    (await readJsonIfPresent<SyncPlan>(out, syncStageKey(run)));
  if (planned) return planned;
  const scratch = await openScratch('signal-kit-sync-plan-');
  try {
    const stage = await stageSyncRun(openStore, out, request, scratch);
    return stage.resolveBatches > 0
      ? stage
      : await packSyncRun(out, { run, ...(request.batchSize ? { batchSize: request.batchSize } : {}) });
  } finally {
    await scratch.close();
  }
}

async function stageSyncRun(
  openStore: (url: string) => Store,
  out: Store,
  request: PrepareSyncRequest,
  scratch: Scratch,
): Promise<SyncPlan> {
  const { run } = request;
  const kind = request.kind ?? 'enrich';
  const read = await readExport(openStore, request, kind, scratch);
  try {
    const carried = await carryOnStoppedRun(out, run, scratch);
    await markSyncRunOpen(out, run.name, run.runId);
    const state = await openSyncState(out, scratch, run.name, run.at);
    let resolveBatches = 0;
    try {
      resolveBatches = await writeResolveBatches(out, run, read.lookups, state.db);
    } finally {
      state.db.close();
    }
    await read.records.publish(out, syncRecordsKey(run), `${run.name}/run-${run.runId}`);
    const stage: SyncPlan = {
      rows: read.rows,
      invalid: read.invalid,
      companies: 0,
      newCompanies: 0,
      batches: 0,
      resolveBatches,
      packed: false,
      stateFrom: state.runId,
      ...(state.ignored ? { stateIgnored: state.ignored } : {}),
      ...(kind === 'enrich-contacts' ? { kind } : {}),
      ...(read.columns ? { columns: read.columns } : {}),
      ...(carried ? { carriedFrom: carried } : {}),
      ...(read.skippedLines > 0 ? { skippedLines: read.skippedLines } : {}),
    };
    await out.writeText(syncStageKey(run), JSON.stringify(stage), JSON_TYPE);
    return stage;
  } finally {
    read.lookups.close();
  }
}

/** Reads the export as a stream into the run's records file (local until published) and its identifiers to resolve. */
async function readExport(
  openStore: (url: string) => Store,
  request: PrepareSyncRequest,
  kind: NonNullable<PrepareSyncRequest['kind']>,
  scratch: Scratch,
) {
  const records = openGzipLines(scratch.path('records.jsonl.gz'));
  const lookups = new LookupSet(scratch.path('lookups.sqlite'));
  let columns: Record<string, unknown> | undefined;
  const chosen = (choice: ColumnChoice) => {
    columns = describeChoice(choice);
  };
  let rows = 0;
  let invalid = 0;
  let skippedLines = 0;
  const skipped = (lines: number) => {
    skippedLines += lines;
  };
  const source = await openInput(openStore, request.input, request.encoding, request.sheet);
  for await (const record of readInputRecords(source, columnRequest(kind, request), chosen, skipped)) {
    if (rows % 2000 === 0) beat(rows);
    rows += 1;
    if (rows > MAX_SYNC_RECORDS) {
      lookups.close();
      throw new InputError(
        `input ${request.input} holds more than ${MAX_SYNC_RECORDS} records, the most a night reads (docs/nightly-crm-enrichment.md#limits): split the export into several schedules`,
      );
    }
    const kept = syncRecordOf(record, identifyRecord(record));
    if (kept.error) invalid += 1;
    if (kept.lookup) lookups.add(kept.lookup);
    await records.write(kept);
  }
  if (rows === 0) {
    lookups.close();
    throw new InputError(`input ${request.input} has no data rows`);
  }
  return { records, lookups, columns, rows, invalid, skippedLines };
}

/** A record as the run keeps it: what identifies its company, or why nothing does. */
function syncRecordOf(record: InputRecord, outcome: ReturnType<typeof identifyRecord>): SyncRecord {
  const kept: SyncRecord = {
    row: record.row,
    ...(record.id !== undefined ? { id: record.id } : {}),
    ...(record.cols ? { cols: record.cols } : {}),
  };
  if (!outcome.ok)
    return { ...kept, raw: record.raw ?? null, error: { code: 'invalid_input', message: outcome.reason } };
  if (outcome.role === 'email' || outcome.role === 'linkedin_person') {
    // A contact: asked by its address, else its LinkedIn profile, one call each.
    const contact = { role: outcome.role, send: outcome.send };
    const matched = outcome.role === 'email' ? 'email' : 'linkedin_url';
    return { ...kept, raw: outcome.raw, matched_by: matched, domain: `${outcome.role}:${outcome.key}`, contact };
  }
  if (outcome.role === 'linkedin_url' || outcome.role === 'company_name') {
    const lookup = { key: `${outcome.role}:${outcome.key}`, role: outcome.role, send: outcome.send };
    return { ...kept, raw: outcome.raw, matched_by: outcome.role, lookup };
  }
  return { ...kept, raw: outcome.raw, domain: outcome.key, matched_by: 'domain' };
}

/** The identifiers a night's export names its companies by, once each, in a private local database. */
class LookupSet {
  private readonly db: DatabaseSync;
  constructor(path: string) {
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
    this.db.exec('CREATE TABLE lookups (seq INTEGER PRIMARY KEY, key TEXT UNIQUE, role TEXT, send TEXT)');
  }
  add(lookup: SyncLookup): void {
    this.db
      .prepare('INSERT OR IGNORE INTO lookups (key, role, send) VALUES (?, ?, ?)')
      .run(lookup.key, lookup.role, lookup.send);
  }
  *all(): Generator<SyncLookup> {
    for (const row of this.db.prepare('SELECT key, role, send FROM lookups ORDER BY seq').iterate()) {
      yield row as unknown as SyncLookup;
    }
  }
  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

/** Writes the identifiers the state has not resolved yet in batches of `RESOLVE_BATCH`; returns how many batches. */
async function writeResolveBatches(out: Store, run: SyncRunRef, lookups: LookupSet, state: StateDb): Promise<number> {
  let batch: SyncLookup[] = [];
  let index = 0;
  for (const lookup of lookups.all()) {
    if (state.resolvedDomain(lookup.key) !== undefined) continue;
    batch.push(lookup);
    if (batch.length === RESOLVE_BATCH) {
      await out.writeText(syncResolveKey(run, index++), JSON.stringify(batch), JSON_TYPE);
      batch = [];
    }
  }
  if (batch.length > 0) await out.writeText(syncResolveKey(run, index++), JSON.stringify(batch), JSON_TYPE);
  return index;
}

/**
 * Packs a planned run's calls, once the records named only by a LinkedIn URL or a name are resolved: each record's
 * company is its domain, and the export's companies go into bulk calls by where each is complete through. Streams
 * the records file into a table of the state's private copy and the batches out of a query. Idempotent: `_plan.json`
 * is written last and returned as is.
 */
export async function packSyncRun(out: Store, request: { run: SyncRunRef; batchSize?: number }): Promise<SyncPlan> {
  const { run } = request;
  const planned = await readJsonIfPresent<SyncPlan>(out, planKey(run));
  if (planned) return planned;
  const stage = JSON.parse(await out.readText(syncStageKey(run))) as SyncPlan;
  const scratch = await openScratch('signal-kit-sync-pack-');
  const state = await openSyncState(out, scratch, run.name, run.at);
  try {
    const resolved = await readResolutions(out, run, stage.resolveBatches);
    const db = state.db.db;
    db.exec('CREATE TEMP TABLE tonight_companies (seq INTEGER PRIMARY KEY, domain TEXT UNIQUE, contact TEXT)');
    const insert = db.prepare('INSERT OR IGNORE INTO tonight_companies (domain, contact) VALUES (?, ?)');
    let read = 0;
    db.exec('BEGIN');
    for await (const record of readSyncRecords(out, run)) {
      if (++read % 5000 === 0) beat(read);
      const domain = recordDomain(record, state.db, resolved);
      if (domain !== undefined) insert.run(domain, record.contact ? JSON.stringify(record.contact) : null);
    }
    db.exec('COMMIT');
    const most = stage.kind === 'enrich-contacts' ? CONTACT_BATCH : MAX_BULK_ENRICH_DOMAINS;
    const size = Math.min(most, Math.max(1, request.batchSize ?? most));
    const packed = await writeBatches(out, run, db, size);
    const plan: SyncPlan = { ...stage, ...packed, packed: true };
    await out.writeText(planKey(run), `${JSON.stringify(plan, null, 2)}\n`, JSON_TYPE);
    return plan;
  } finally {
    state.db.close();
    await scratch.close();
  }
}

/**
 * One bulk call per `size` companies sharing a start (the full answers first): a call never mixes starts, so no
 * company is asked from below what it holds and no signal is bought twice. The companies a run answers share its
 * scheduled time as their start the next night, so a night asks about one call per `size` companies; only a company
 * whose newest signal came after its run's time (the service's clock ahead) gets a start, and a call, of its own.
 */
async function writeBatches(out: Store, run: SyncRunRef, db: DatabaseSync, size: number) {
  const query =
    db.prepare(`SELECT t.domain AS domain, t.contact AS contact, c.through AS start, c.domain IS NULL AS fresh
    FROM tonight_companies t LEFT JOIN main.companies c ON c.domain = t.domain
    ORDER BY c.through IS NOT NULL, julianday(c.through), c.through, t.seq`);
  const counts = { companies: 0, newCompanies: 0, batches: 0 };
  let batch: SyncBatch | undefined;
  const pending: Promise<void>[] = [];
  const flush = async () => {
    if (!batch) return;
    const done = batch;
    batch = undefined;
    pending.push(out.writeText(syncBatchKey(run, done.index), JSON.stringify(done), JSON_TYPE));
    if (pending.length >= PENDING_WRITES) await Promise.all(pending.splice(0));
    if (++counts.batches % 100 === 0) beat(counts.batches);
  };
  for (const row of query.iterate()) {
    const { domain, contact, start, fresh } = row as {
      domain: string;
      contact: string | null;
      start: string | null;
      fresh: number;
    };
    counts.companies += 1;
    if (fresh) counts.newCompanies += 1;
    if (batch && (batch.detected_after !== start || batch.domains.length === size)) await flush();
    batch ??= { index: counts.batches, detected_after: start, domains: [] };
    const entry: SyncBatchCompany = { domain, start, ...(contact ? { contact: JSON.parse(contact) } : {}) };
    batch.domains.push(entry);
  }
  await flush();
  await Promise.all(pending);
  return counts;
}

const PENDING_WRITES = 8;

/** A record's company: its domain, else what its LinkedIn URL or name resolved to (the state's, then tonight's). */
export function recordDomain(
  record: SyncRecord,
  state: StateDb,
  resolved: ReadonlyMap<string, string | null>,
): string | undefined {
  if (record.domain !== undefined) return record.domain;
  if (!record.lookup) return undefined;
  return state.resolvedDomain(record.lookup.key) ?? resolved.get(record.lookup.key) ?? undefined;
}

/** What the run's resolve batches found: identifier key → its company's domain (null: the service knows none). */
export async function readResolutions(
  out: Store,
  run: SyncRunRef,
  batches: number,
): Promise<Map<string, string | null>> {
  const resolved = new Map<string, string | null>();
  for (let index = 0; index < batches; index++) {
    const found = await readJsonIfPresent<Record<string, string | null>>(out, syncResolvedKey(run, index));
    for (const [key, domain] of Object.entries(found ?? {})) resolved.set(key, domain);
  }
  return resolved;
}

/** The run's records, in input order, one at a time. */
export function readSyncRecords(store: Store, run: SyncRunRef): AsyncGenerator<SyncRecord> {
  return readGzipLines<SyncRecord>(store, syncRecordsKey(run));
}

/** Tells Temporal the plan is alive while it reads a large export (outside an activity: nothing to tell). */
function beat(progress: number): void {
  try {
    Context.current().heartbeat(progress);
  } catch {
    // not inside an activity (unit tests)
  }
}
