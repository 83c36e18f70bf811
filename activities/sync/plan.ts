import { gunzipSync, gzipSync } from 'node:zlib';
import { Context } from '@temporalio/activity';
import { InputError } from '../../connectors/errors.ts';
import { mapOrdered } from '../../connectors/map-ordered.ts';
import { type ColumnChoice, describeChoice } from '../../connectors/normalize/columns.ts';
import { CONTACT_BATCH, MAX_BULK_ENRICH_DOMAINS } from '../../connectors/signal-api/limits.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readAll, readJsonIfPresent, writeBody } from '../../connectors/storage/store-io.ts';
import { columnRequest, identifyRecord } from '../input/identify.ts';
import { openInput, readInputRecords } from '../input/read-input.ts';
import { planKey } from '../run/scheduled-layout.ts';
import { carryOnStoppedRun } from './carry-on.ts';
import {
  syncBatchKey,
  syncOpenRunKey,
  syncRecordsKey,
  syncResolvedKey,
  syncResolveKey,
  syncStageKey,
} from './layout.ts';
import { readSyncState } from './state.ts';
import type { PrepareSyncRequest, SyncBatch, SyncBatchCompany, SyncLookup, SyncPlan, SyncRunRef } from './types.ts';

/** One record of the night's export as the run keeps it (`work/run-<id>/records.jsonl.gz`), in input order. */
export interface SyncRecord {
  row: number;
  id?: string;
  cols?: Record<string, string>;
  /** The identifier's value as the file had it. */
  raw?: unknown;
  /** The company's domain (rows by domain or website). */
  domain?: string;
  matched_by?: string;
  /** Why the row has no usable identifier, or why it cannot be answered. */
  error?: { code: string; message: string };
  /** A row named only by a LinkedIn company URL or a name: what resolves it to its company (then `domain`). */
  lookup?: SyncLookup;
  /** A contact (contacts syncs): how it is asked; `domain` is then its key. */
  contact?: SyncBatchCompany['contact'];
}

/** Records named only by a LinkedIn URL or a name, resolved per batch: about 4 s of calls at 300 a minute. */
export const RESOLVE_BATCH = 20;
const JSON_TYPE = { contentType: 'application/json' };

const PENDING_WRITES = 8;

/**
 * Plans a run: carries on a run that stopped before its commit (its saved answers are taken into the state, so
 * nothing it paid for is asked again), reads the export afresh and matches its rows as `enrich` does, writes the
 * run's records, then packs the export's companies into bulk calls by where each is complete through (as a push packs
 * its watermarks): a company the state holds is asked only after that time, a new one for its full answer.
 *
 * An export that cannot be read throws before anything is written or paid for. Idempotent: `_plan.json` is written
 * last and returned as is by a repeated plan.
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

  // Read the whole export first: a file that cannot be read fails the run before any state changes.
  const records: SyncRecord[] = [];
  const source = await openInput(openStore, request.input, request.encoding, request.sheet);
  let columns: Record<string, unknown> | undefined;
  const chosen = (choice: ColumnChoice) => {
    columns = describeChoice(choice);
  };
  const kind = request.kind ?? 'enrich';
  let skippedLines = 0;
  const skipped = (lines: number) => {
    skippedLines += lines;
  };
  for await (const record of readInputRecords(source, columnRequest(kind, request), chosen, skipped)) {
    if (records.length % 2000 === 0) beat(records.length);
    const kept: SyncRecord = {
      row: record.row,
      ...(record.id !== undefined ? { id: record.id } : {}),
      ...(record.cols ? { cols: record.cols } : {}),
    };
    const outcome = identifyRecord(record);
    if (!outcome.ok) {
      records.push({ ...kept, raw: record.raw ?? null, error: { code: 'invalid_input', message: outcome.reason } });
    } else if (outcome.role === 'email' || outcome.role === 'linkedin_person') {
      // A contact: asked by its address, else its LinkedIn profile, one call each.
      const contact = { role: outcome.role, send: outcome.send };
      const matched = outcome.role === 'email' ? 'email' : 'linkedin_url';
      records.push({
        ...kept,
        raw: outcome.raw,
        matched_by: matched,
        domain: `${outcome.role}:${outcome.key}`,
        contact,
      });
    } else if (outcome.role === 'linkedin_url' || outcome.role === 'company_name') {
      const lookup = { key: `${outcome.role}:${outcome.key}`, role: outcome.role, send: outcome.send };
      records.push({ ...kept, raw: outcome.raw, matched_by: outcome.role, lookup });
    } else records.push({ ...kept, raw: outcome.raw, domain: outcome.key, matched_by: 'domain' });
  }
  if (records.length === 0) throw new InputError(`input ${request.input} has no data rows`);

  const carried = await carryOnStoppedRun(out, run);
  await out.writeText(syncOpenRunKey(run.name), JSON.stringify({ run_id: run.runId }), JSON_TYPE);
  const state = await readSyncState(out, run.name);
  // A LinkedIn URL or a name the state resolved on an earlier night is asked by its company's domain.
  const lookups = new Map<string, SyncLookup>();
  for (const record of records) {
    if (!record.lookup) continue;
    const domain = state.resolved.get(record.lookup.key);
    if (typeof domain === 'string') record.domain = domain;
    else lookups.set(record.lookup.key, record.lookup);
  }
  await writeBody(out, syncRecordsKey(run), gzipSync(records.map((r) => JSON.stringify(r)).join('\n')), {
    contentType: 'application/gzip',
  });
  const unresolved = [...lookups.values()];
  for (let i = 0; i * RESOLVE_BATCH < unresolved.length; i++) {
    const batch = unresolved.slice(i * RESOLVE_BATCH, (i + 1) * RESOLVE_BATCH);
    await out.writeText(syncResolveKey(run, i), JSON.stringify(batch), JSON_TYPE);
  }
  const stage: SyncPlan = {
    rows: records.length,
    invalid: records.filter((record) => record.error).length,
    companies: 0,
    newCompanies: 0,
    batches: 0,
    resolveBatches: Math.ceil(unresolved.length / RESOLVE_BATCH),
    packed: false,
    stateFrom: state.runId,
    ...(kind === 'enrich-contacts' ? { kind } : {}),
    ...(columns ? { columns } : {}),
    ...(carried ? { carriedFrom: carried } : {}),
    ...(skippedLines > 0 ? { skippedLines } : {}),
  };
  await out.writeText(syncStageKey(run), JSON.stringify(stage), JSON_TYPE);
  return stage.resolveBatches > 0
    ? stage
    : packSyncRun(out, { run, ...(request.batchSize ? { batchSize: request.batchSize } : {}) });
}

/**
 * Packs a planned run's calls, once the records named only by a LinkedIn URL or a name are resolved: each record's
 * company is its domain, and the export's companies go into bulk calls by where each is complete through. Idempotent:
 * `_plan.json` is written last and returned as is.
 */
export async function packSyncRun(out: Store, request: { run: SyncRunRef; batchSize?: number }): Promise<SyncPlan> {
  const { run } = request;
  const planned = await readJsonIfPresent<SyncPlan>(out, planKey(run));
  if (planned) return planned;
  const stage = JSON.parse(await out.readText(syncStageKey(run))) as SyncPlan;
  const records = await readSyncRecords(out, run);
  const resolved = await readResolutions(out, run, stage.resolveBatches);
  for (const record of records) {
    if (!record.lookup || record.domain) continue;
    const domain = resolved.get(record.lookup.key);
    if (typeof domain === 'string') record.domain = domain;
  }
  if (resolved.size > 0) {
    await writeBody(out, syncRecordsKey(run), gzipSync(records.map((r) => JSON.stringify(r)).join('\n')), {
      contentType: 'application/gzip',
    });
  }
  const state = await readSyncState(out, run.name);
  const domains = new Map<string, SyncBatchCompany['contact']>();
  for (const record of records) if (record.domain) domains.set(record.domain, record.contact);
  const entries: SyncBatchCompany[] = [...domains].map(([domain, contact]) => ({
    domain,
    start: state.companies.get(domain)?.through ?? null,
    ...(contact ? { contact } : {}),
  }));
  const most = stage.kind === 'enrich-contacts' ? CONTACT_BATCH : MAX_BULK_ENRICH_DOMAINS;
  const size = Math.min(most, Math.max(1, request.batchSize ?? most));
  const batches = groupCalls(entries, size);
  const writes = mapOrdered(batches, PENDING_WRITES, (batch) =>
    out.writeText(syncBatchKey(run, batch.index), JSON.stringify(batch), JSON_TYPE),
  );
  let written = 0;
  for await (const _ of writes) if (++written % 100 === 0) beat(written);

  const plan: SyncPlan = {
    ...stage,
    companies: domains.size,
    newCompanies: entries.filter((entry) => !state.companies.has(entry.domain)).length,
    batches: batches.length,
    packed: true,
  };
  await out.writeText(planKey(run), `${JSON.stringify(plan, null, 2)}\n`, JSON_TYPE);
  return plan;
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

/** The run's records, in input order. */
export async function readSyncRecords(store: Store, run: SyncRunRef): Promise<SyncRecord[]> {
  const text = gunzipSync(await readAll(await store.openRead(syncRecordsKey(run)))).toString('utf8');
  return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line) as SyncRecord);
}

/**
 * One bulk call per `size` companies sharing a start (the full answers together): a call never mixes starts, so no
 * company is asked from below what it holds and no signal is bought twice. The companies a run answers share its
 * scheduled time as their start the next night, so a night asks about one call per `size` companies; only a company
 * whose newest signal came after its run's time (the service's clock ahead) gets a start, and a call, of its own.
 */
export function groupCalls(entries: readonly SyncBatchCompany[], size: number): SyncBatch[] {
  const groups = new Map<string | null, SyncBatchCompany[]>();
  for (const entry of entries) {
    const group = groups.get(entry.start) ?? [];
    groups.set(entry.start, group);
    group.push(entry);
  }
  const starts = [...groups.keys()].sort((a, b) => (a === null ? -1 : b === null ? 1 : Date.parse(a) - Date.parse(b)));
  const batches: SyncBatch[] = [];
  for (const start of starts) {
    const group = groups.get(start)!;
    for (let i = 0; i < group.length; i += size) {
      batches.push({ index: batches.length, detected_after: start, domains: group.slice(i, i + size) });
    }
  }
  return batches;
}

/** Tells Temporal the plan is alive while it reads a large export (outside an activity: nothing to tell). */
function beat(progress: number): void {
  try {
    Context.current().heartbeat(progress);
  } catch {
    // not inside an activity (unit tests)
  }
}
