import { gunzipSync, gzipSync } from 'node:zlib';
import type { Store } from '../../connectors/storage/store.ts';
import { readAll, readJsonIfPresent, writeBody } from '../../connectors/storage/store-io.ts';
import { syncStateKey, syncStatePointerKey } from './layout.ts';
import type { CompanyAnswer, HeldSignal } from './types.ts';

/**
 * The state of a nightly sync, beside its output so that any worker carries the schedule on:
 *
 * - per company (its domain): the time it is complete through (`through`: every signal the service showed up to
 *   then is held, so the next run asks only after it), how many signals of each type are held, the newest one, and
 *   the ids of the signals detected within `RETENTION_DAYS` before `through` (an answer taken in twice, by a retried
 *   finalize or a run carrying on a stopped one, adds nothing twice);
 * - per record (its id): a fingerprint of the row last written for it, so the next run's `changes.csv` holds only the
 *   rows that differ;
 * - per LinkedIn company URL or company name a row was named by: the company's domain it resolved to.
 *
 * A commit writes a new state object, then replaces the pointer `_state.json` in one step: a crash leaves the
 * previous state whole. The pointer keeps the state before it too, so a finalize repeated after its commit compares
 * against the same earlier rows.
 */

/** Remembered signal ids reach this far below a company's complete-through time. */
export const RETENTION_DAYS = 90;
const RETENTION_MS = RETENTION_DAYS * 86_400_000;

export interface CompanyState {
  status: 'ok' | 'not_found';
  through: string | null;
  company?: CompanyAnswer['company'];
  /** A contact's person fields (contacts syncs). */
  contact?: Record<string, unknown>;
  counts: Record<string, number>;
  newest: HeldSignal | null;
  /** `[signal_id, detected_at]` of held signals within the retention window. */
  ids: [string, string][];
}

export interface SyncState {
  /** The run that committed it (null: none yet). */
  runId: string | null;
  companies: Map<string, CompanyState>;
  /** record key → fingerprint of its last written row. */
  records: Map<string, string>;
  /** `linkedin_url:…` or `company_name:…` → the domain it resolved to (asked once, never again). */
  resolved: Map<string, string>;
}

interface StateObject {
  version: 1;
  run_id: string;
  companies: Record<string, CompanyState>;
  records: Record<string, string>;
  resolved?: Record<string, string>;
}

export interface LastSyncRun {
  run_id: string;
  status: string;
  manifest: string;
  finished_at: string;
  credits: number;
  calls: number;
  new_signals: number;
  records: { total: number; new: number; changed: number; unchanged: number; gone: number };
}

export interface StatePointer {
  version: 1;
  name: string;
  run_id: string;
  key: string;
  updated_at: string;
  companies: number;
  /** The pointer's state before this commit (for a repeated finalize of the same run). */
  previous: { run_id: string; key: string } | null;
  last_run?: LastSyncRun;
}

export const emptyState = (): SyncState => ({
  runId: null,
  companies: new Map(),
  records: new Map(),
  resolved: new Map(),
});

export async function readSyncPointer(store: Store, name: string): Promise<StatePointer | undefined> {
  return readJsonIfPresent<StatePointer>(store, syncStatePointerKey(name));
}

async function readStateObject(store: Store, key: string): Promise<SyncState> {
  const parsed = JSON.parse(gunzipSync(await readAll(await store.openRead(key))).toString('utf8')) as StateObject;
  return {
    runId: parsed.run_id,
    companies: new Map(Object.entries(parsed.companies)),
    records: new Map(Object.entries(parsed.records)),
    resolved: new Map(Object.entries(parsed.resolved ?? {})),
  };
}

/** The committed state (empty before the first commit). */
export async function readSyncState(store: Store, name: string): Promise<SyncState> {
  const pointer = await readSyncPointer(store, name);
  return pointer ? readStateObject(store, pointer.key) : emptyState();
}

/**
 * The state a run builds on: the committed one, or, when this very run committed already (a repeated finalize), the
 * one before its commit.
 */
export async function readBaseState(store: Store, name: string, runId: string): Promise<SyncState> {
  const pointer = await readSyncPointer(store, name);
  if (!pointer) return emptyState();
  if (pointer.run_id !== runId) return readStateObject(store, pointer.key);
  return pointer.previous ? readStateObject(store, pointer.previous.key) : emptyState();
}

/** Writes `state` as committed by `runId` and points at it. */
export async function commitSyncState(
  store: Store,
  name: string,
  runId: string,
  state: SyncState,
  lastRun?: LastSyncRun,
): Promise<void> {
  const before = await readSyncPointer(store, name);
  const key = syncStateKey(name, runId);
  const object: StateObject = {
    version: 1,
    run_id: runId,
    companies: Object.fromEntries(state.companies),
    records: Object.fromEntries(state.records),
    resolved: Object.fromEntries(state.resolved),
  };
  await writeBody(store, key, gzipSync(JSON.stringify(object)), { contentType: 'application/gzip' });
  const previous =
    before && before.run_id !== runId ? { run_id: before.run_id, key: before.key } : (before?.previous ?? null);
  const pointer: StatePointer = {
    version: 1,
    name,
    run_id: runId,
    key,
    updated_at: new Date().toISOString(),
    companies: state.companies.size,
    previous,
    ...(lastRun ? { last_run: lastRun } : {}),
  };
  await store.writeText(syncStatePointerKey(name), `${JSON.stringify(pointer, null, 2)}\n`, {
    contentType: 'application/json',
  });
}

/** Forgets the state (a fresh start: every company gets its full answer again on the next run). */
export async function resetSyncState(store: Store, name: string): Promise<void> {
  await store.delete(syncStatePointerKey(name));
}

/**
 * Takes one call's answer for a company into its state: new signals counted once (by id), the newest kept, and the
 * company complete through the run's scheduled time (`asOf`: the call was made after it, so every signal detected up
 * to then was there to be returned), or through its newest signal if that is later. Returns how many were new.
 */
export function mergeAnswer(
  held: CompanyState | undefined,
  answer: CompanyAnswer,
  asOf: string,
): { state: CompanyState | undefined; added: number } {
  if (answer.status === 'error') return { state: held, added: 0 };
  const state: CompanyState = held
    ? { ...held, counts: { ...held.counts }, ids: [...held.ids] }
    : { status: answer.status, through: null, counts: {}, newest: null, ids: [] };
  if (answer.status === 'ok') state.status = 'ok';
  if (answer.company) state.company = answer.company;
  if (answer.contact) state.contact = answer.contact;
  const known = new Set(state.ids.map(([id]) => id));
  let added = 0;
  for (const signal of answer.signals) {
    if (known.has(signal.signal_id)) continue;
    if (state.through !== null && Date.parse(signal.detected_at) <= Date.parse(state.through)) continue;
    known.add(signal.signal_id);
    added += 1;
    state.counts[signal.signal_type] = (state.counts[signal.signal_type] ?? 0) + 1;
    state.ids.push([signal.signal_id, signal.detected_at]);
    if (!state.newest || Date.parse(signal.detected_at) > Date.parse(state.newest.detected_at)) state.newest = signal;
  }
  const candidates = [state.through, asOf, state.newest?.detected_at ?? null].filter(
    (value): value is string => value !== null,
  );
  state.through = new Date(Math.max(...candidates.map((value) => Date.parse(value)))).toISOString();
  const floor = Date.parse(state.through) - RETENTION_MS;
  state.ids = state.ids.filter(([, at]) => Date.parse(at) >= floor);
  return { state, added };
}
