import { createHash } from 'node:crypto';
import type {
  CrmFieldInfo,
  CrmObject,
  CrmRecordUpdate,
  CrmWriteOutcome,
  CrmWriter,
} from '../../connectors/crm/writer.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { syncChangesKey, syncRowsKey } from '../sync/layout.ts';
import { readChangedRecords, readRecordIds } from './changes.ts';
import { type WriteField, writeFieldsOf, writeObjectOf } from './fields.ts';
import { closeLedger, type Ledger, readLedger, valuesPrint, writeBackState, writeLedger } from './ledger.ts';
import { doneSection, failedSection, recordWriteBackInManifest } from './manifest.ts';
import { oweNight, takeOwed } from './owed.ts';
import { preflight } from './preflight.ts';
import { writeWriteBackReport } from './report.ts';
import type { WriteBackRequest, WriteBackResult } from './types.ts';
import { type CrmValue, sameValue, typeValue } from './values.ts';

/** What the activity needs besides its request: the night's store and the CRM's writer (its token in the worker). */
export interface WriteBackDeps {
  store: Store;
  writer: CrmWriter;
  /** Called as the write goes (a heartbeat), so a long write is not taken for a dead worker. */
  progress?: (note: string) => void;
}

/** A record of tonight's write: the values it sends, and whether an earlier night left it pending. */
interface Planned {
  id: string;
  values: Record<string, CrmValue>;
  carried: boolean;
}

/**
 * Writes a night's changes to the CRM by record id, exactly once in effect:
 * 1. a night already written returns its result (the ledger keeps it), with no CRM call;
 * 2. pre-flight: the token's scopes and every field (exists, updateable, typed);
 * 3. the records of `changes.csv` (never one gone from tonight's `rows.csv`), after those earlier nights left
 *    pending; values typed for their field, `fill-empty` fields read first and left where a person set them; values
 *    the CRM already confirmed are not sent again;
 * 4. the ledger records them pending before the CRM is asked, and the writer's checkpoint (a Salesforce ingest job)
 *    as soon as it exists, so a cut write resumes instead of writing twice;
 * 5. the outcomes: written → confirmed; transient rejections and records not attempted stay pending; permanent ones
 *    are recorded with the values refused and not tried again until those change; `writeback.csv` beside `changes.csv`;
 * 6. the night's manifest gets its `write_back` section: the counts and `writeback.csv`, or why the write-back failed.
 */
export async function writeBackNight(deps: WriteBackDeps, request: WriteBackRequest): Promise<WriteBackResult> {
  const { store } = deps;
  const { run } = request;
  let result: WriteBackResult;
  try {
    result = await writeNight(deps, request);
  } catch (error) {
    // The manifest says why (this attempt); a retry that succeeds replaces it with the counts.
    const pending = await pendingOf(store, run.name);
    await recordWriteBackInManifest(store, run, failedSection(request.crm, error, pending)).catch(() => false);
    throw error;
  }
  await recordWriteBackInManifest(store, run, doneSection(result));
  return result;
}

/** The write-back itself (see writeBackNight); the manifest is told by the caller. */
async function writeNight(deps: WriteBackDeps, request: WriteBackRequest): Promise<WriteBackResult> {
  const ledger = await readLedger(deps.store, request.run.name);
  try {
    return await writeWithLedger(deps, request, ledger);
  } finally {
    await closeLedger(ledger);
  }
}

/** The number of changes the ledger's pointer says are pending (undefined when it cannot be read). */
async function pendingOf(store: Store, name: string): Promise<number | undefined> {
  const state = await writeBackState(store, name).catch(() => null);
  return state && 'pending' in state ? state.pending : undefined;
}

/** The write-back with the schedule's ledger open (steps 1 to 5 of writeBackNight). */
async function writeWithLedger(
  deps: WriteBackDeps,
  request: WriteBackRequest,
  ledger: Ledger,
): Promise<WriteBackResult> {
  const { store, writer } = deps;
  const { run } = request;
  const done = ledger.nights[run.runId];
  if (done !== undefined) return done;

  const fields = writeFieldsOf(writer.crm, request.fields, request.policies);
  const changes = await readChangedRecords(
    store,
    syncChangesKey(run),
    request.kind,
    fields.map((f) => f.column),
  );
  const tonight = await readRecordIds(store, syncRowsKey(run));
  const object = writeObjectOf(writer.crm, request.kind, [...tonight]);
  const described = await preflight(writer, request.kind, object, fields).catch(async (error: unknown) => {
    await oweNight(store, ledger, run);
    throw error;
  });

  const typed = typeRecords(changes.records, fields, described);
  const columns = fields.map((f) => f.column);
  await takeOwed(store, ledger, run.runId, request.kind, columns, (r) => typeRecords(r, fields, described).records);
  const planned = mergePending(ledger, typed.records, tonight, run.runId);
  const kept = await applyFillEmpty(writer, object, fields, ledger, planned);
  const toSend = planned.filter((record) => !alreadyConfirmed(ledger, record));
  ledger.records.transaction(() => {
    for (const id of kept) ledger.records.dropPending(id);
    for (const record of toSend) ledger.records.setPending(record.id, { values: record.values, from: run.runId });
  });
  await writeLedger(store, ledger);

  const outcomes = await sendUpdates(deps, ledger, run.runId, object, toSend);
  const confirmedBefore = planned.filter((record) => !toSend.includes(record)).map((record) => record.id);
  settle(ledger, toSend, outcomes, run.runId);
  const report = await writeWriteBackReport(store, run, changes.idHeader, [
    ...outcomes,
    ...confirmedBefore.map((id) => ({ id, outcome: 'written' as const })),
    ...typed.refused,
    ...kept.map((id) => ({ id, outcome: 'not_attempted' as const, reason: 'fill-empty: the CRM holds values' })),
  ]);
  ledger.records.transaction(() => {
    for (const refusal of typed.refused) ledger.records.dropPending(refusal.id);
  });
  const result = resultOf(request, object, ledger, planned, [...outcomes, ...typed.refused], kept.length);
  ledger.nights[run.runId] = { ...result, truncated: typed.truncated, reportUrl: report.url, report: report.file };
  delete ledger.checkpoint;
  await writeLedger(store, ledger);
  return ledger.nights[run.runId] as WriteBackResult;
}

/** Each record's cells typed for their fields; a cell no field takes refuses its record (a permanent rejection). */
function typeRecords(
  records: readonly { id: string; cells: Record<string, string> }[],
  fields: readonly WriteField[],
  described: Map<string, CrmFieldInfo>,
) {
  const typed: { id: string; values: Record<string, CrmValue> }[] = [];
  const refused: CrmWriteOutcome[] = [];
  let truncated = 0;
  for (const record of records) {
    const values: Record<string, CrmValue> = {};
    const errors: string[] = [];
    for (const { column, field } of fields) {
      const info = described.get(field) as CrmFieldInfo;
      const cell = record.cells[column];
      if (cell === undefined) continue;
      const value = typeValue(info, cell);
      if ('error' in value) errors.push(value.error);
      else {
        values[field] = value.value;
        if (value.truncated) truncated += 1;
      }
    }
    if (errors.length > 0) {
      refused.push({
        id: record.id,
        outcome: 'rejected',
        code: 'SIGNAL_KIT_TYPE',
        message: errors.join('; '),
        transient: false,
      });
    } else typed.push({ id: record.id, values });
  }
  return { records: typed, refused, truncated };
}

/** Pending records of earlier nights first (unless tonight changed them again, or they are gone), then tonight's. */
function mergePending(
  ledger: Ledger,
  typed: readonly { id: string; values: Record<string, CrmValue> }[],
  tonight: ReadonlySet<string>,
  runId: string,
): Planned[] {
  const tonightById = new Map(typed.map((record) => [record.id, record.values]));
  const planned: Planned[] = [];
  const gone: string[] = [];
  for (const [id, pending] of ledger.records.allPending()) {
    if (!tonight.has(id)) gone.push(id);
    else if (!tonightById.has(id) && pending.from !== runId)
      planned.push({ id, values: pending.values, carried: true });
  }
  ledger.records.transaction(() => {
    for (const id of gone) ledger.records.dropPending(id);
    for (const [id, values] of tonightById) {
      const refused = ledger.records.refused(id);
      if (refused !== undefined && refused.print === valuesPrint(values)) continue;
      if (refused !== undefined) ledger.records.dropRefused(id);
      const pending = ledger.records.pending(id);
      planned.push({ id, values, carried: pending !== undefined && pending.from !== runId });
    }
  });
  return planned;
}

/**
 * `fill-empty` fields: the CRM's values read first; a field that holds a value other than the one the kit last
 * confirmed there (a person's) is left out. Returns the records left with nothing to write (they are not sent).
 */
async function applyFillEmpty(
  writer: CrmWriter,
  object: CrmObject,
  fields: readonly WriteField[],
  ledger: Ledger,
  planned: Planned[],
): Promise<string[]> {
  const careful = fields.filter((f) => f.policy === 'fill-empty').map((f) => f.field);
  if (careful.length === 0 || planned.length === 0) return [];
  const current = await readInChunks(
    writer,
    object,
    planned.map((record) => record.id),
    careful,
  );
  const kept: string[] = [];
  for (let i = planned.length - 1; i >= 0; i -= 1) {
    const record = planned[i] as Planned;
    const now = current.get(record.id) ?? {};
    const ours = ledger.records.confirmed(record.id) ?? {};
    for (const field of careful) {
      const held = now[field] ?? null;
      if (held !== null && held !== '' && !sameValue(held, ours[field])) delete record.values[field];
    }
    if (Object.keys(record.values).length === 0) {
      kept.push(record.id);
      planned.splice(i, 1);
    }
  }
  return kept.reverse();
}

const READ_CHUNK = 100;

async function readInChunks(writer: CrmWriter, object: CrmObject, ids: readonly string[], fields: string[]) {
  const all = new Map<string, Record<string, string | null>>();
  for (let at = 0; at < ids.length; at += READ_CHUNK) {
    const read = await writer.read(object, ids.slice(at, at + READ_CHUNK), fields);
    for (const [id, values] of read) all.set(id, values);
  }
  return all;
}

function alreadyConfirmed(ledger: Ledger, record: Planned): boolean {
  const confirmed = ledger.records.confirmed(record.id);
  if (confirmed === undefined) return false;
  return Object.entries(record.values).every(([field, value]) => sameValue(confirmed[field] ?? null, value));
}

/** The updates of tonight's write: its checkpoint kept in the ledger, resumed when the same updates were cut. */
async function sendUpdates(
  deps: WriteBackDeps,
  ledger: Ledger,
  runId: string,
  object: CrmObject,
  records: readonly Planned[],
): Promise<CrmWriteOutcome[]> {
  if (records.length === 0) return [];
  const updates: CrmRecordUpdate[] = records.map((record) => ({ id: record.id, values: record.values }));
  const print = createHash('sha256').update(JSON.stringify(updates)).digest('hex').slice(0, 32);
  const saved = ledger.checkpoint;
  const resume = saved && saved.run === runId && saved.object === object && saved.updates === print ? saved : undefined;
  deps.progress?.(`writing ${updates.length} records to ${deps.writer.crm} ${object}`);
  return await deps.writer.write({
    object,
    updates,
    ...(resume ? { resume: resume.checkpoint } : {}),
    onCheckpoint: async (checkpoint) => {
      ledger.checkpoint = { run: runId, object, updates: print, checkpoint };
      await writeLedger(deps.store, ledger);
    },
    onPause: (pause) => deps.progress?.(`paused ${pause.ms} ms: ${pause.reason}`),
  });
}

/** The ledger after the CRM's answers. */
function settle(ledger: Ledger, sent: readonly Planned[], outcomes: readonly CrmWriteOutcome[], runId: string): void {
  const byId = new Map(sent.map((record) => [record.id, record]));
  const { records } = ledger;
  records.transaction(() => {
    for (const outcome of outcomes) {
      const record = byId.get(outcome.id);
      if (record === undefined) continue;
      if (outcome.outcome === 'written') {
        records.confirm(outcome.id, record.values);
        records.dropPending(outcome.id);
      } else if (outcome.outcome === 'rejected' && !outcome.transient) {
        const print = valuesPrint(record.values);
        records.refuse(outcome.id, { print, code: outcome.code, message: outcome.message, run: runId });
        records.dropPending(outcome.id);
      }
    }
  });
}

function resultOf(
  request: WriteBackRequest,
  object: CrmObject,
  ledger: Ledger,
  planned: readonly Planned[],
  outcomes: readonly CrmWriteOutcome[],
  kept: number,
): Omit<WriteBackResult, 'truncated' | 'reportUrl'> {
  const count = (test: (o: CrmWriteOutcome) => boolean) => outcomes.filter(test).length;
  const sentIds = new Set(outcomes.map((o) => o.id));
  return {
    crm: request.crm,
    object,
    written: count((o) => o.outcome === 'written') + planned.filter((r) => !sentIds.has(r.id)).length,
    rejected: count((o) => o.outcome === 'rejected'),
    transient: count((o) => o.outcome === 'rejected' && o.transient),
    notAttempted: count((o) => o.outcome === 'not_attempted') + kept,
    carried: planned.filter((record) => record.carried).length,
    kept,
    pending: ledger.records.count('pending'),
  };
}
