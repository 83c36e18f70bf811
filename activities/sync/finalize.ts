import { createHash } from 'node:crypto';
import { type CrmFile, crmFileColumns, crmKeptColumns } from '../../connectors/crm/import-file.ts';
import { StorageRefusedError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { writeBody } from '../../connectors/storage/store-io.ts';
import { MANIFEST_SCHEMA_VERSION, SyncManifestSchema } from '../../contract/manifest-schemas.ts';
import type { TableDef, TableRow } from '../../contract/tables/columns.ts';
import { enrichTables, invalidLinesAsRows, rowsTable } from '../../contract/tables/rows.ts';
import { chargedFields, endingFields, runFinalizer, scheduledRunHead } from '../run/finalize-run.ts';
import { planKey, scheduledRunMarkers } from '../run/scheduled-layout.ts';
import type { UnsavedAnswers } from '../run/unsaved-answers.ts';
import { csvHeader, csvRow, encodeTable, tableContentType } from '../tables/encode.ts';
import { readSyncAnswer } from './fetch.ts';
import {
  syncChangesKey,
  syncManifestClaims,
  syncManifestKey,
  syncRowsKey,
  syncStatePointerKey,
  syncTableKey,
} from './layout.ts';
import { readResolutions, readSyncRecords, type SyncRecord } from './plan.ts';
import { commitSyncState, mergeAnswer, readBaseState, type SyncState } from './state.ts';
import type { CompanyAnswer, FinalizeSyncRequest, SyncAnswer, SyncPlan, SyncResult } from './types.ts';

/**
 * Ends a run, in this order:
 * 1. takes every saved answer of the run into the state it started from (the state before this run's own commit,
 *    when this is a repeated finalize), counting each new signal once;
 * 2. writes `rows.csv` (every record of the night's export once, under its id, with its company's current picture:
 *    counts per type and the newest signal of everything held, not only tonight's), `changes.csv` (the records new
 *    since the last run or whose row differs) and the rows table in the `--format`s asked;
 * 3. writes the manifest: which records were new, changed, unchanged and gone, what was paid (unsaved answers
 *    included), the calls;
 * 4. commits the state (per company and per record), so the next run asks only after it.
 * A crash anywhere repeats it whole with the same result; a crash before step 4 leaves the state as it was.
 *
 * A failed night (its output refused an answer for good: a full disk) writes its manifest before its files, so that
 * what it was charged is said while the disk still has room for a small file; then the files that still fit, and the
 * manifest again naming them. A manifest refused as well still returns what the night was charged.
 */
export const finalizeSyncRun = runFinalizer<FinalizeSyncRequest, SyncGathered, SyncWritten, SyncManifest, SyncResult>({
  markers: scheduledRunMarkers,
  manifestKey: ({ run }) => syncManifestKey(run),
  gather: gatherSyncRun,
  write: async (store, request, gathered) => {
    const files = await syncFiles(store, request, gathered);
    if (request.status !== 'failed') files.parts = await writeSyncParts(store, files.bodies);
    return files;
  },
  manifest: syncManifest,
  contract: { schema: SyncManifestSchema, claims: syncManifestClaims },
  writeAfterFailedManifest: (store, _request, manifest, _gathered, written) =>
    writeFailedNightFiles(store, manifest, written),
  afterManifest: (store, request, manifest, gathered, written) =>
    commitSyncRun(store, request, manifest, gathered, written),
  resultWithoutManifest: (store, request, manifest) => syncResult(store, request, manifest),
});

/** Step 1: the state the run started from, with every saved answer of the run taken into it. */
async function gatherSyncRun(store: Store, request: FinalizeSyncRequest) {
  const run = request.run;
  const base = await readBaseState(store, run.name, run.runId);
  const plan = JSON.parse(await store.readText(planKey(run))) as SyncPlan;
  const companies = new Map(base.companies);
  const tonight = new Map<string, CompanyAnswer>();
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
    for (const [domain, company] of Object.entries(answer.domains)) {
      tonight.set(domain, company);
      const { state, added } = mergeAnswer(companies.get(domain), company, answer.as_of);
      if (state) companies.set(domain, state);
      paid.newSignals += added;
    }
  }
  return { base, plan, companies, tonight, savedCalls, paid };
}

type SyncGathered = Awaited<ReturnType<typeof gatherSyncRun>>;
type SyncWritten = Awaited<ReturnType<typeof syncFiles>>;
type SyncManifest = ReturnType<typeof syncManifest>;

/** A file of the night: its key, its bytes, and its entry in the manifest. */
interface SyncFile {
  body: Buffer;
  contentType: string;
  part: SyncPart;
}

interface SyncPart {
  key: string;
  lines: number;
  bytes: number;
  sha256: string;
  table: 'rows';
  format: string;
}

/**
 * Step 2: every record's row, which of them are new, changed, unchanged or gone, and the files that hold them (their
 * bytes; `parts` names those written).
 */
async function syncFiles(store: Store, request: FinalizeSyncRequest, gathered: SyncGathered) {
  const run = request.run;
  const { base, plan, companies, tonight } = gathered;
  const records = await readSyncRecords(store, run);
  const resolved = new Map(base.resolved);
  for (const [key, domain] of await readResolutions(store, run, plan.resolveBatches ?? 0)) {
    if (domain !== null) resolved.set(key, domain);
  }
  const file = crmFileColumns(rowsTable(request.kind, crmKeptColumns(plan.columns, request.keepColumns)), plan.columns);
  const def = file.flat;
  const rows: TableRow[] = [];
  const changed: TableRow[] = [];
  const fingerprints = new Map<string, string>();
  const outcome = { new: [] as string[], changed: [] as string[], unchanged: 0, gone: [] as string[] };
  const statuses = { ok: 0, not_found: 0, error: 0, invalid: 0 };
  const occurrences = new Map<string, number>();
  for (const record of records) {
    const line = lineOf(record, companies, tonight, request.status);
    const row = rowOf(line, def);
    rows.push(row);
    statuses[line['status'] as keyof typeof statuses] += 1;
    const key = recordKey(record, occurrences);
    const print = fingerprint(row);
    fingerprints.set(key, print);
    const before = base.records.get(key);
    if (before === print) outcome.unchanged += 1;
    else {
      changed.push(row);
      (before === undefined ? outcome.new : outcome.changed).push(key);
    }
  }
  for (const key of base.records.keys()) if (!fingerprints.has(key)) outcome.gone.push(key);

  const bodies = [csvFile(syncRowsKey(run), file, rows), csvFile(syncChangesKey(run), file, changed)];
  for (const format of run.formats ?? []) {
    const key = syncTableKey(run, format);
    const body = encodeTable(format, def, rows, 'gzip');
    const part: SyncPart = { key, lines: rows.length, bytes: body.length, sha256: sha256(body), table: 'rows', format };
    bodies.push({ body, contentType: tableContentType(format, 'gzip'), part });
  }
  const parts: SyncPart[] = [];
  const summary = {
    total: records.length,
    new: outcome.new.length,
    changed: outcome.changed.length,
    unchanged: outcome.unchanged,
    gone: outcome.gone.length,
  };
  const kept = def.columns.flatMap((column) => (column.source === undefined ? [] : [column.source]));
  return { records, resolved, fingerprints, outcome, statuses, summary, bodies, parts, kept };
}

/** Writes the night's files in order; returns their manifest entries. */
async function writeSyncParts(store: Store, files: readonly SyncFile[]): Promise<SyncPart[]> {
  const parts: SyncPart[] = [];
  for (const { body, contentType, part } of files) {
    await writeBody(store, part.key, body, { contentType });
    parts.push(part);
  }
  return parts;
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
  for (const file of written.bodies) {
    const wrote = await writeSyncParts(store, [file]).catch((error: unknown) => {
      if (error instanceof StorageRefusedError) return undefined;
      throw error;
    });
    if (!wrote) break;
    written.parts.push(...wrote);
  }
  return written.parts.length === 0 ? manifest : { ...manifest, parts: written.parts };
}

/** Step 3: the manifest. */
function syncManifest(
  store: Store,
  request: FinalizeSyncRequest,
  gathered: SyncGathered,
  written: SyncWritten,
  unsaved: UnsavedAnswers,
) {
  const run = request.run;
  const { base, plan, paid } = gathered;
  const { statuses, outcome } = written;
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
      records: written.records.length,
      ...statuses,
      companies: plan.companies,
      new_companies: plan.newCompanies,
      new_signals: paid.newSignals,
    },
    records: {
      ...written.summary,
      new_ids: outcome.new,
      changed_ids: outcome.changed,
      gone_ids: outcome.gone,
    },
    ...chargedFields(paid.credits, unsaved),
    overlap: { credits: paid.overlapCredits },
    calls: paid.calls,
    batches: { total: plan.batches, done: paid.answered },
    parts: written.parts,
    state: {
      key: syncStatePointerKey(run.name),
      from_run: base.runId,
      ...(plan.carriedFrom ? { carried_from: plan.carriedFrom } : {}),
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
  request: FinalizeSyncRequest,
  manifest: SyncManifest,
  gathered: SyncGathered,
  written: SyncWritten,
): Promise<SyncResult> {
  const run = request.run;
  const { status, credits_charged: credits } = manifest;
  const { paid } = gathered;
  const { summary } = written;
  const next: SyncState = {
    runId: run.runId,
    companies: gathered.companies,
    records: written.fingerprints,
    resolved: written.resolved,
  };
  if (status !== 'failed')
    await commitSyncState(store, run.name, run.runId, next, {
      run_id: run.runId,
      status,
      manifest: syncManifestKey(run),
      finished_at: manifest.finished_at,
      credits,
      calls: paid.calls,
      new_signals: paid.newSignals,
      records: summary,
    });
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
    name: run.name,
    runId: run.runId,
    dt: run.date,
  };
}

/**
 * A record's line, in the shape the enrich rows table reads: its company's current picture (`signal_summary`: counts
 * per type of everything held; `latest_signal`: the newest), or why it has none.
 */
function lineOf(
  record: SyncRecord,
  companies: ReadonlyMap<string, ReturnType<SyncState['companies']['get']>>,
  tonight: ReadonlyMap<string, CompanyAnswer>,
  status: FinalizeSyncRequest['status'],
): Record<string, unknown> {
  const base = {
    row: record.row,
    record_id: record.id ?? null,
    ...(record.cols ? { columns: record.cols } : {}),
    input: typeof record.raw === 'string' ? record.raw : record.raw == null ? null : JSON.stringify(record.raw),
    ...(record.matched_by ? { matched_by: record.matched_by } : {}),
  };
  if (record.error) {
    return record.error.code === 'invalid_input'
      ? { ...base, status: 'invalid', raw: record.raw ?? null, error: record.error.message }
      : { ...base, status: 'error', error: record.error };
  }
  if (record.domain === undefined) {
    // Named only by a LinkedIn URL or a name that resolves to no company the service knows.
    return { ...base, status: 'not_found', signal_summary: {} };
  }
  const domain = record.domain;
  const held = companies.get(domain);
  // A night stopped by its budget before asking the company: not reached tonight, whatever an earlier night held.
  const unreached = status === 'budget_exhausted' && !tonight.has(domain);
  if (held && !unreached) {
    return {
      ...base,
      status: held.status,
      // A contact's row names its employer's domain; a company's, its own.
      domain: record.contact ? (held.company?.domain ?? null) : domain,
      ...(held.contact ? { contact: held.contact } : {}),
      ...(held.company ? { company: held.company } : {}),
      signal_summary: held.counts,
      ...(held.newest ? { latest_signal: held.newest } : {}),
    };
  }
  const answer = tonight.get(domain);
  const named = record.contact ? {} : { domain };
  const error =
    answer?.error ??
    (status === 'budget_exhausted'
      ? { code: 'budget_exhausted', message: 'not asked: the run reached --max-credits; the next run asks it' }
      : { code: 'not_answered', message: 'not answered tonight (its call failed); the next run asks it' });
  return { ...base, status: 'error', ...named, error };
}

function rowOf(line: Record<string, unknown>, def: TableDef): TableRow {
  if (line['status'] === 'invalid') return invalidLinesAsRows([line], def)[0]!;
  return enrichTables([line], def).rows[0]!;
}

/** The record's key in the state: its CRM id, else its identifier (twins without ids are numbered). */
function recordKey(record: SyncRecord, seen: Map<string, number>): string {
  const base = record.id !== undefined ? `id:${record.id}` : `value:${record.domain ?? JSON.stringify(record.raw)}`;
  const n = (seen.get(base) ?? 0) + 1;
  seen.set(base, n);
  return n === 1 ? base : `${base}#${n}`;
}

/** What a CRM import would change: the row without its position in the file. */
function fingerprint(row: TableRow): string {
  const { row: _position, ...rest } = row;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 32);
}

function sha256(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** A CRM import file: the export's id header, the kept columns, the enrichment columns under the CRM's names. */
function csvFile(key: string, file: CrmFile<TableDef>, rows: readonly TableRow[]): SyncFile {
  const lines = [csvHeader(file.header), ...rows.map((row) => csvRow(file.def, row))];
  const body = Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
  const part: SyncPart = {
    key,
    lines: rows.length,
    bytes: body.length,
    sha256: sha256(body),
    table: 'rows',
    format: 'csv',
  };
  return { body, contentType: 'text/csv; charset=utf-8', part };
}
