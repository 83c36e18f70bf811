import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { z } from 'zod';
import { InputError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { copyProvenPart, openLocalPart, publishFilePart, type Scratch } from '../run/part-files.ts';
import { zeroCounts } from '../run/parts.ts';
import type { LastRun } from './last-run.ts';
import { legacySyncStateKey, syncStateKey, syncStatePointerKey } from './layout.ts';
import { StateDb, stateDbProblem } from './sync-db.ts';
import { readLegacyState } from './sync-legacy.ts';

/**
 * The state of a nightly sync, beside its output so that any worker carries the schedule on (`sync-db.ts` holds
 * what is in it: per company, per record, per resolved identifier).
 *
 * A commit publishes the state database, gzipped, as a part of its own (`<name>/_state/run-<id>.sqlite.gz`, proven
 * by its metadata: owner `<name>/_state`, size, sha256), then replaces the pointer `_state.json` in one step: a crash
 * leaves the previous state whole. The pointer keeps the state before it too, so a finalize repeated after its commit
 * compares against the same earlier rows.
 *
 * Read under the rules `load` applies to a manifest: the pointer is size-capped and schema-checked and its keys must
 * be the ones its run ids place inside `<name>/_state/`; the state object must prove itself as a part, is capped
 * before and after decompression, and every row is checked (`sync-rules.ts`). A state past the size caps fails the
 * night before it pays; any other state that is not the schedule's own is ignored, the night priced as a fresh one,
 * and the reason (never a byte of the object) said in the plan and the manifest.
 */

/** The largest state object a night reads, as stored (gzipped). */
export const STATE_MAX_STORED_BYTES = 2 * 1024 ** 3;
/** How much a state object may inflate: at most this many times its stored size, and at most `STATE_MAX_BYTES`. */
export const STATE_MAX_INFLATION = 32;
export const STATE_MAX_BYTES = 16 * 1024 ** 3;
const POINTER_MAX_BYTES = 64 * 1024;
const RUN_ID = /^\d{8}T\d{6}(\.\d{3})?Z$/;

const stateRef = z.object({ run_id: z.string().regex(RUN_ID), key: z.string() });
const pointerSchema = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  name: z.string(),
  run_id: z.string().regex(RUN_ID),
  key: z.string(),
  updated_at: z.string(),
  companies: z.number().int().nonnegative(),
  previous: stateRef.nullable(),
  last_run: z.looseObject({}).optional(),
});

export interface StatePointer {
  version: 1 | 2;
  name: string;
  run_id: string;
  key: string;
  updated_at: string;
  companies: number;
  /** The pointer's state before this commit (for a repeated finalize of the same run). */
  previous: { run_id: string; key: string } | null;
  last_run?: LastRun;
}

/** The pointer as found, or why it is not the schedule's own (`problem`), or undefined when there is none. */
export async function readCheckedPointer(
  store: Store,
  name: string,
): Promise<{ pointer: StatePointer } | { problem: string } | undefined> {
  const key = syncStatePointerKey(name);
  const info = await store.stat(key);
  if (!info) return undefined;
  if (info.size > POINTER_MAX_BYTES) return { problem: `_state.json is larger than ${POINTER_MAX_BYTES} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(await store.readText(key));
  } catch {
    return { problem: '_state.json is not JSON' };
  }
  const parsed = pointerSchema.safeParse(value);
  if (!parsed.success) return { problem: `_state.json: ${String(parsed.error.issues[0]?.path[0] ?? 'value')} invalid` };
  const pointer = parsed.data as StatePointer;
  if (pointer.name !== name) return { problem: "_state.json: name is not this schedule's" };
  if (!placed(name, pointer)) return { problem: `_state.json: key is not inside ${name}/_state/ as run_id names it` };
  if (pointer.previous && !placed(name, pointer.previous)) {
    return { problem: `_state.json: previous.key is not inside ${name}/_state/ as previous.run_id names it` };
  }
  return { pointer };
}

/** A state key is the one its run id places inside `<name>/_state/` (the legacy JSON form or the database). */
const placed = (name: string, ref: { run_id: string; key: string }) =>
  ref.key === syncStateKey(name, ref.run_id) || ref.key === legacySyncStateKey(name, ref.run_id);

/** The pointer, when it is the schedule's own (what `schedule state` shows). */
export async function readSyncPointer(store: Store, name: string): Promise<StatePointer | undefined> {
  const found = await readCheckedPointer(store, name);
  return found && 'pointer' in found ? found.pointer : undefined;
}

/** A state opened for a night: its database (a private local file) and, when the stored one was ignored, why. */
export interface OpenedState {
  db: StateDb;
  /** The run that committed it (null: a fresh state). */
  runId: string | null;
  ignored?: string;
}

/**
 * The state a night at `nightAt` builds on, in a database file of `scratch`: the committed one, or, with `baseOf`
 * naming this very run when it committed already (a repeated finalize), the one before its commit.
 */
export async function openSyncState(
  store: Store,
  scratch: Scratch,
  name: string,
  nightAt: string,
  baseOf?: string,
): Promise<OpenedState> {
  const fresh = (ignored?: string): OpenedState => ({
    db: StateDb.create(scratch.path(`fresh-${Date.now()}.sqlite`), name, null),
    runId: null,
    ...(ignored ? { ignored } : {}),
  });
  const found = await readCheckedPointer(store, name);
  if (!found) return fresh();
  if ('problem' in found) return fresh(found.problem);
  const { pointer } = found;
  const ref = baseOf !== undefined && pointer.run_id === baseOf ? pointer.previous : pointer;
  if (!ref) return fresh();
  const path = scratch.path(`state-${ref.run_id}.sqlite`);
  if (ref.key === legacySyncStateKey(name, ref.run_id)) {
    const legacy = await readLegacyState(store, ref.key, path, { name, runId: ref.run_id, nightAt });
    return 'problem' in legacy ? fresh(legacy.problem) : { db: legacy.db, runId: ref.run_id };
  }
  const problem = await downloadState(store, ref, path, name);
  if (problem) return fresh(problem);
  const db = StateDb.open(path);
  const invalid = await stateDbProblem(db, { name, runId: ref.run_id }, nightAt);
  if (!invalid) return { db, runId: ref.run_id };
  db.close();
  return fresh(`${ref.key}: ${invalid}`);
}

const stateIdentity = (name: string, runId: string) => ({ owner: `${name}/_state`, options: `run-${runId}`, index: 0 });

/** Copies a state object into `path`, proven and inflated under the caps; a problem, or a state too large thrown. */
async function downloadState(
  store: Store,
  ref: { run_id: string; key: string },
  path: string,
  name: string,
): Promise<string | undefined> {
  const info = await store.stat(ref.key);
  if (!info) return `${ref.key} is missing`;
  if (info.size > STATE_MAX_STORED_BYTES) throw tooLarge(ref.key, `is ${info.size} bytes stored`);
  const gz = `${path}.gz`;
  const proven = await copyProvenPart(store, ref.key, stateIdentity(name, ref.run_id), gz, STATE_MAX_STORED_BYTES);
  if (!proven) return `${ref.key} is missing`;
  if ('problem' in proven) return `${ref.key}: ${proven.problem}`;
  const cap = Math.min(STATE_MAX_BYTES, STATE_MAX_INFLATION * Math.max(proven.part.bytes, 1024 * 1024));
  let inflated = 0;
  let over = false;
  const gunzip = createGunzip();
  const capped = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      inflated += chunk.length;
      if (inflated > cap) {
        over = true;
        return;
      }
      yield chunk;
    }
  };
  try {
    await pipeline(createReadStream(gz), gunzip, capped, createWriteStream(path, { mode: 0o600 }));
  } catch {
    if (!over) return `${ref.key} is not valid gzip`;
  }
  if (over) throw tooLarge(ref.key, `inflates past ${cap} bytes`);
  return undefined;
}

function tooLarge(key: string, what: string): InputError {
  return new InputError(
    `the schedule's state ${key} ${what}, more than a night reads (docs/nightly-crm-enrichment.md#limits): the night stops before any paid call; \`schedule reset\` starts it afresh`,
  );
}

/** Publishes `db` as committed by `runId` and points at it. */
export async function commitSyncState(
  store: Store,
  scratch: Scratch,
  name: string,
  runId: string,
  db: StateDb,
  lastRun?: LastRun,
): Promise<void> {
  const before = await readSyncPointer(store, name);
  const key = syncStateKey(name, runId);
  db.setMeta('run_id', runId);
  const saved = scratch.path(`commit-${runId}.sqlite`);
  db.saveTo(saved);
  const file = openLocalPart(`${saved}.gz`);
  await pipeline(createReadStream(saved), createGzip({ level: 6 }), file.stream);
  const proof = await file.finish();
  await publishFilePart(
    store,
    key,
    { path: file.path, ...proof },
    { contentType: 'application/gzip', counts: zeroCounts(), identity: stateIdentity(name, runId) },
  );
  const previous =
    before && before.run_id !== runId ? { run_id: before.run_id, key: before.key } : (before?.previous ?? null);
  const pointer: StatePointer = {
    version: 2,
    name,
    run_id: runId,
    key,
    updated_at: new Date().toISOString(),
    companies: db.companyCount(),
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
