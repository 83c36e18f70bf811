import { StorageRefusedError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { MANIFEST_SCHEMA_VERSION, SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import { chargedFields, endingFields, runFinalizer, scheduledRunHead } from '../run/finalize-run.ts';
import { openScratch, type Scratch } from '../run/part-files.ts';
import { planKey, scheduledRunMarkers } from '../run/scheduled-layout.ts';
import type { AnswerWait, UnsavedAnswers } from '../run/unsaved-answers.ts';
import { lastRunOf } from '../state/last-run.ts';
import { mergeAnswer } from '../state/sync-rules.ts';
import { commitSyncState, type OpenedState, openSyncState } from '../state/sync-state.ts';
import { readSyncAnswer } from './fetch.ts';
import {
  syncChangesKey,
  syncGoneKey,
  syncManifestClaims,
  syncManifestKey,
  syncRowsKey,
  syncStatePointerKey,
} from './layout.ts';
import { type NightFile, publishNightFiles, writeNightFiles } from './night-files.ts';
import { readResolutions } from './plan.ts';
import type { FinalizeSyncRequest, SyncAnswer, SyncPlan, SyncResult } from './types.ts';

/**
 * Ends a run, in this order:
 * 1. takes every saved answer of the run into the state it started from (the state before this run's own commit,
 *    when this is a repeated finalize), counting each new signal once;
 * 2. writes `rows.csv` (every record of the night's export once, under its id, with its company's current picture:
 *    counts per type and the newest signal of everything held, not only tonight's), `changes.csv` (the records new
 *    since the last run or whose row differs), `gone.csv` (the ids of the records gone from the export) and the rows
 *    table in the `--format`s asked, each streamed to a local file and published as a proven part (`night-files.ts`);
 * 3. writes the manifest: which records were new, changed, unchanged and gone, what was paid (unsaved answers
 *    included), the calls;
 * 4. commits the state (per company and per record), so the next run asks only after it.
 * A crash anywhere repeats it whole with the same result; a crash before step 4 leaves the state as it was.
 *
 * A failed night (its output refused an answer for good: a full disk) writes its manifest before its files, so that
 * what it was charged is said while the disk still has room for a small file; then the files that still fit, and the
 * manifest again naming them. A manifest refused as well still returns what the night was charged.
 */
export async function finalizeSyncRun(
  store: Store,
  request: FinalizeSyncRequest,
  wait?: AnswerWait,
): Promise<SyncResult> {
  const scratch = await openScratch('signal-kit-sync-night-');
  const local: LocalRequest = { ...request, scratch, opened: [] };
  try {
    return await finalizeNight(store, local, wait);
  } finally {
    for (const state of local.opened) state.db.close();
    await scratch.close();
  }
}

/** The request with what stays on this worker: its private folder and the state databases it opened. */
interface LocalRequest extends FinalizeSyncRequest {
  scratch: Scratch;
  opened: OpenedState[];
}

const finalizeNight = runFinalizer<LocalRequest, SyncGathered, SyncWritten, SyncManifest, SyncResult>({
  markers: scheduledRunMarkers,
  manifestKey: ({ run }) => syncManifestKey(run),
  gather: gatherSyncRun,
  write: async (store, request, gathered) => {
    const files = await syncFiles(store, request, gathered);
    if (request.status !== 'failed') files.parts = await publishNightFiles(store, files.files);
    return files;
  },
  manifest: syncManifest,
  contract: { schema: SyncManifestSchema, claims: syncManifestClaims },
  writeAfterFailedManifest: (store, _request, manifest, _gathered, written) =>
    writeFailedNightFiles(store, manifest, written),
  afterManifest: (store, request, manifest, gathered, written) =>
    commitSyncRun(store, request, manifest, gathered, written),
  resultWithoutManifest: (_store, request, manifest) => syncResult(_store, request, manifest),
});

/** Step 1: the state the run started from, with every saved answer of the run taken into it. */
async function gatherSyncRun(store: Store, request: LocalRequest) {
  const run = request.run;
  const state = await openSyncState(store, request.scratch, run.name, run.at, run.runId);
  request.opened.push(state);
  const plan = JSON.parse(await store.readText(planKey(run))) as SyncPlan;
  const db = state.db;
  // Every company answered tonight, with its error when the service answered one.
  db.db.exec('CREATE TEMP TABLE IF NOT EXISTS tonight_answers (domain TEXT PRIMARY KEY, error TEXT)');
  const answered = db.db.prepare('INSERT OR REPLACE INTO tonight_answers (domain, error) VALUES (?, ?)');
  const savedCalls = new Map<number, Set<string>>();
  const paid = { credits: 0, calls: 0, overlapCredits: 0, newSignals: 0, answered: 0 };
  for (let index = 0; index < plan.batches; index++) {
    const answer: SyncAnswer | undefined = await readSyncAnswer(store, run.name, run.runId, index);
    if (!answer) continue;
    paid.answered += 1;
    paid.credits += answer.credits;
    paid.calls += answer.calls;
    paid.overlapCredits += answer.overlap.credits;
    if (answer.paid_calls?.length) savedCalls.set(index, new Set(answer.paid_calls));
    db.transaction(() => {
      for (const [domain, company] of Object.entries(answer.domains)) {
        const error = company.status === 'error' ? JSON.stringify(company.error ?? { code: 'error' }) : null;
        answered.run(domain, error);
        const { state: merged, added } = mergeAnswer(db.company(domain), company, answer.as_of);
        if (merged) db.putCompany(domain, merged);
        paid.newSignals += added;
      }
    });
  }
  return { state, plan, savedCalls, paid };
}

export type SyncGathered = Awaited<ReturnType<typeof gatherSyncRun>>;
type SyncWritten = Awaited<ReturnType<typeof syncFiles>>;
type SyncManifest = ReturnType<typeof syncManifest>;

/**
 * Step 2: every record's row, which of them are new, changed, unchanged or gone, and the local files that hold them
 * (`parts` names those published).
 */
async function syncFiles(store: Store, request: LocalRequest, gathered: SyncGathered) {
  const { state, plan } = gathered;
  const resolved = await readResolutions(store, request.run, plan.resolveBatches ?? 0);
  state.db.transaction(() => {
    for (const [key, domain] of resolved) if (domain !== null) state.db.putResolved(key, domain);
  });
  const night = await writeNightFiles(store, request, state.db, plan, resolved);
  const parts: NightFile['part'][] = [];
  return { ...night, parts };
}

/**
 * A failed night, its manifest written: its files, as many as the output takes (a full disk refuses the rest), and
 * the manifest naming those, which the finalize skeleton writes again (refused, the first one stands).
 */
async function writeFailedNightFiles(
  store: Store,
  manifest: SyncManifest,
  written: SyncWritten,
): Promise<SyncManifest> {
  for (const file of written.files) {
    const wrote = await publishNightFiles(store, [file]).catch((error: unknown) => {
      if (error instanceof StorageRefusedError) return undefined;
      throw error;
    });
    if (!wrote) break;
    written.parts.push(...wrote);
  }
  if (written.parts.length === 0) return manifest;
  const records = { ...manifest.records, ...idsField(written.parts) };
  return {
    ...manifest,
    records,
    parts: written.parts.filter((part) => part.table !== undefined),
    ...goneField(written.parts),
  };
}

/** `gone.csv`'s entry, once published: a part of no table. */
function goneField(parts: readonly NightFile['part'][]) {
  const gone = parts.find((part) => part.table === undefined && part.key.endsWith('/gone.csv'));
  return gone ? { gone } : {};
}

/** `ids.csv`'s entry (the ids of the new, changed and gone records), once published. */
function idsField(parts: readonly NightFile['part'][]) {
  const ids = parts.find((part) => part.table === undefined && part.key.endsWith('/ids.csv'));
  return ids ? { ids } : {};
}

/** Step 3: the manifest. */
function syncManifest(
  store: Store,
  request: LocalRequest,
  gathered: SyncGathered,
  written: SyncWritten,
  unsaved: UnsavedAnswers,
) {
  const run = request.run;
  const { state, plan, paid } = gathered;
  const { statuses } = written;
  let status = request.status;
  if (status === 'completed' && statuses.error > 0) status = 'completed_with_errors';
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    kind: 'crm-sync',
    ...scheduledRunHead(run, request, status),
    input: request.input,
    output: store.url,
    rows_kind: request.kind,
    columns: { kept: written.kept },
    counts: {
      input_rows: plan.rows,
      ...(plan.skippedLines ? { skipped_lines: plan.skippedLines } : {}),
      records: written.summary.total,
      ...statuses,
      companies: plan.companies,
      new_companies: plan.newCompanies,
      new_signals: paid.newSignals,
    },
    records: { ...written.summary, ...idsField(written.parts) },
    ...chargedFields(paid.credits, unsaved),
    overlap: { credits: paid.overlapCredits },
    calls: paid.calls,
    batches: { total: plan.batches, done: paid.answered },
    parts: written.parts.filter((part) => part.table !== undefined),
    ...goneField(written.parts),
    state: {
      key: syncStatePointerKey(run.name),
      from_run: state.runId,
      ...(plan.carriedFrom ? { carried_from: plan.carriedFrom } : {}),
      ...(state.ignored ? { ignored: state.ignored } : {}),
    },
    ...endingFields(request),
  };
}

/**
 * Step 4: commits the state. A failed night (an output that refused an answer, a fatal error) is not committed: the
 * next night carries it on, with the answers a worker's spool kept for it, so it pays for none of them again.
 */
async function commitSyncRun(
  store: Store,
  request: LocalRequest,
  manifest: SyncManifest,
  gathered: SyncGathered,
  written: SyncWritten,
): Promise<SyncResult> {
  const run = request.run;
  const { paid, state } = gathered;
  if (manifest.status !== 'failed') {
    const did = { calls: paid.calls, new_signals: paid.newSignals, records: written.summary };
    const lastRun = lastRunOf(run, syncManifestKey(run), manifest, did);
    await commitSyncState(store, request.scratch, run.name, run.runId, state.db, lastRun);
  }
  return syncResult(store, request, manifest);
}

/** What the night did, as its manifest says it. */
function syncResult(store: Store, request: FinalizeSyncRequest, manifest: SyncManifest): SyncResult {
  const run = request.run;
  const { total, new: added, changed, unchanged, gone } = manifest.records;
  return {
    status: manifest.status,
    records: { total, new: added, changed, unchanged, gone },
    credits: manifest.credits_charged,
    calls: manifest.calls,
    newSignals: manifest.counts.new_signals,
    manifestUrl: store.urlOf(syncManifestKey(run)),
    rowsUrl: store.urlOf(syncRowsKey(run)),
    changesUrl: store.urlOf(syncChangesKey(run)),
    goneUrl: store.urlOf(syncGoneKey(run)),
    name: run.name,
    runId: run.runId,
    dt: run.date,
  };
}
