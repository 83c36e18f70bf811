import { CREDITS, MAX_SIGNALS_PER_CALL } from '../../connectors/signal-api/limits.ts';
import type { BulkEnrichItem, EnrichCompaniesParams, Signal } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import type { TableName } from '../../contract/tables/columns.ts';
import { SIGNALS_TABLE, signalRow } from '../../contract/tables/signals.ts';
import { sendBulkEnrich } from '../paid/bulk-enrich-call.ts';
import { type PaidBatchActivity, publishSpooled } from '../paid/paid-batch.ts';
import { lostRace, publishPaidPart } from '../paid/paid-call.ts';
import {
  encodeTableParts,
  optionsHash,
  type PartIdentity,
  type PartRead,
  readPart,
  readPartLines,
  type StoredPart,
  storedSignalTableParts,
  writePart,
  writeTableParts,
  zeroCounts,
} from '../run/parts.ts';
import { answerKey, callsPrefix } from '../run/scheduled-layout.ts';
import type { BatchResult } from '../run/types.ts';
import type { OutputFormat } from '../tables/formats.ts';
import { batchDoneKey, pushBatchKey, pushPartKey, pushTablePartKey, runFolders } from './layout.ts';
import type {
  DomainOutcome,
  PushBatch,
  PushBatchDomain,
  PushBatchRecord,
  PushBatchRequest,
  PushFilters,
  PushRunRef,
} from './types.ts';

/** Whose a push part is: the push's run, the filters of its calls, and the batch. */
export function pushPartIdentity(request: PushBatchRequest): PartIdentity {
  const { run, index, filters } = request;
  return { owner: `${run.name}/run-${run.runId}`, options: optionsHash(filters), index };
}

/** One output line: a new signal, with the watchlist domain it was found for. */
export type PushLine = { domain: string } & Signal;

/**
 * Fetches batch `index` of a run with one bulk call, writes the signals its domains need as
 * `part-<index>.jsonl.gz` (and its flat tables), then the batch's answer record (`answer-<index>.json`), and records
 * the batch (`done-<index>.json`).
 *
 * Paid once, or counted, through the jobs' machinery (docs/paid-answers.md): the call is sent under a marker in the
 * run's `work/calls/` with the attempt's cancellation (`sendPaidCall`); its answer is published by `publishPaidPart`,
 * with the answer record as the batch's receipt: it is written last and names the call, and an attempt that finds it
 * changed since it looked (another attempt saved the batch first) keeps its marker with the credits the service
 * said. An output that refuses the write for good (a full disk, access denied) stops the run, and the part, its
 * tables and the record wait in the worker's spool: the next try of the run publishes them before any call.
 */
export const fetchPushBatch: PaidBatchActivity<PushBatchRequest> = async (
  client,
  store,
  request,
  attempt = { attempt: 1 },
) => {
  const { run, index, filters } = request;
  await publishSpooled(store, runFolders(run), attempt);
  const recorded = await readBatchRecord(store, run, index);
  if (recorded && !recorded.failed) return { index, reused: true, failed: false, counts: recorded.counts };

  const identity = pushPartIdentity(request);
  const seen = await readPart(store, answerKey(run, index), identity);
  const saved = await recordSavedAnswer(store, run, index, identity, seen);
  if (saved) return saved;

  const batch = JSON.parse(await store.readText(pushBatchKey(run, index))) as PushBatch;
  const params = bulkRequest(batch, filters);
  const folder = { callsPrefix: callsPrefix(run) };
  const { results, answered } = await sendBulkEnrich(client, store, folder, index, attempt, params);

  const { lines, record } = collect(batch, results);
  record.counts.credits = answered?.credits ?? 0;
  record.calls = 1;
  // Only the fingerprint of what was there: a record whose part did not prove itself is replaced, not continued.
  const replaced = seen.fingerprint === undefined ? {} : { fingerprint: seen.fingerprint };
  const published = await publishPaidPart(
    store,
    answerKey(run, index),
    replaced,
    identity,
    answered ? [answered] : [],
    (calls, target) => {
      record.paid_calls = calls;
      return writeAnswer(target, run, index, identity, lines, record);
    },
    attempt.spool,
  );
  if (published.lost) {
    const winner = await readPart(store, answerKey(run, index), identity);
    const theirs = await recordSavedAnswer(store, run, index, identity, winner);
    if (theirs) return theirs;
    lostRace(answerKey(run, index), store, undefined);
  }
  await writeBatchRecord(store, run, record);
  return { index, reused: false, failed: false, counts: record.counts };
};

/** The bulk call of a batch: its domains from their lowest start, the push's filters (round 2: one type). */
function bulkRequest(batch: PushBatch, filters: PushFilters): EnrichCompaniesParams {
  const types = batch.signal_types ?? filters.signal_types;
  return {
    domains: batch.domains.map((entry) => entry.domain),
    ...(batch.detected_after ? { detected_after: batch.detected_after } : {}),
    ...(types ? { signal_types: types } : {}),
    ...(filters.signal_subtypes ? { signal_subtypes: filters.signal_subtypes } : {}),
    limit: batch.limit,
  };
}

/**
 * A batch whose answer record (and, when it has signals, its part) an earlier attempt or run saved: recorded done
 * from them, without a call. Undefined when there is none that proves itself (a part spoiled, another run's).
 */
export async function recordSavedAnswer(
  store: Store,
  run: PushRunRef,
  index: number,
  identity: PartIdentity,
  seen: PartRead,
): Promise<BatchResult | undefined> {
  if (!seen.part) return undefined;
  const [saved] = await readPartLines<PushBatchRecord>(store, answerKey(run, index));
  if (!saved) return undefined;
  saved.paid_calls = seen.part.calls;
  if (saved.counts.lines > 0) {
    const key = pushPartKey(run, index);
    const written = (await readPart(store, key, identity)).part;
    if (!written || written.failed) return undefined;
    saved.part = { key, lines: written.counts.lines, bytes: written.bytes, sha256: written.sha256 };
    // Written before the record, so present; listed again from their own metadata.
    const tables = await storedTableParts(store, run, index, identity);
    if (tables.length > 0) saved.tables = tables;
  }
  await writeBatchRecord(store, run, saved);
  return { index, reused: true, failed: false, counts: saved.counts };
}

/**
 * Writes a batch's answer to `target` (the output, or the spool that keeps what the output refused): the flat tables
 * and the lines part first, the answer record last, since it is what a retry trusts. Returns the record as stored.
 */
async function writeAnswer(
  target: Store,
  run: PushRunRef,
  index: number,
  identity: PartIdentity,
  lines: readonly PushLine[],
  record: PushBatchRecord,
): Promise<StoredPart> {
  const calls = record.paid_calls ?? [];
  if (lines.length > 0) {
    const key = pushPartKey(run, index);
    const tables = await writeTableParts(target, pushTables(run, index, lines), 'done', identity);
    if (tables.length > 0) record.tables = tables;
    const part = await writePart(target, 'gzip', key, lines, record.counts, 'done', calls, identity);
    record.part = { key, lines: lines.length, bytes: part.bytes, sha256: part.sha256 };
  }
  // One JSON line, with the metadata of a part: whose it is, its hash and the calls it holds.
  const counts = { ...zeroCounts(), lines: 1 };
  return writePart(target, 'none', answerKey(run, index), [record], counts, 'done', calls, identity);
}

/** The batch's signals table, encoded in each of the run's formats (none without `--format`). */
function pushTables(run: PushRunRef, index: number, lines: readonly PushLine[]) {
  if (!run.formats?.length) return [];
  const output = {
    formats: run.formats,
    compression: 'gzip' as const,
    keyOf: (table: TableName, format: OutputFormat) => pushTablePartKey(run, table, index, format),
  };
  const rows = lines.map((line) => signalRow(line, { record_id: null, row: null, domain: line.domain }));
  return encodeTableParts(output, [{ def: SIGNALS_TABLE, rows }]);
}

/** The batch's table parts as stored (a retry that finds the part written). */
function storedTableParts(store: Store, run: PushRunRef, index: number, identity: PartIdentity) {
  return storedSignalTableParts(store, run.formats ?? [], identity, (format) =>
    pushTablePartKey(run, 'signals', index, format),
  );
}

/**
 * Turns one bulk answer into output lines (newest first, as the service returns them) and the batch record.
 *
 * Each domain keeps the signals after its own start that it has not pushed (and, in a backfill, before the window's
 * end); the rest were paid for and are counted as overlap. The call's newest signal, of any domain, is a time the
 * service had reached when it answered, so every domain answered in full is complete through it: that is its new
 * watermark. A domain that got `limit` signals (or fewer than the coverage counts) and whose oldest one is still
 * after its start may have more: it is `behind` (asked again with the spec's maximum); already at that maximum, it
 * is asked once per signal type it has (`narrow`); cut even then, what is left is counted as `missing`.
 */
export function collect(
  batch: PushBatch,
  results: readonly BulkEnrichItem[],
): { lines: PushLine[]; record: PushBatchRecord } {
  const byDomain = new Map(results.map((result) => [result.domain.toLowerCase(), result]));
  const record = emptyRecord(batch);
  const lines: PushLine[] = [];
  const before = batch.before === undefined ? undefined : Date.parse(batch.before);
  let newest: number | undefined;
  for (const result of results) {
    if (result.status !== 'ok') continue;
    for (const signal of result.signals) {
      const at = Date.parse(signal.detected_at);
      if (newest === undefined || at > newest) newest = at;
    }
  }
  const answeredAt = newest === undefined ? null : new Date(newest).toISOString();
  record.answered_at = answeredAt;

  for (const entry of batch.domains) {
    const { domain } = entry;
    const result = byDomain.get(domain);
    if (!result) {
      record.counts.error += 1;
      record.errors.push({ domain, code: 'missing_result', message: 'the service returned no result for this domain' });
      continue;
    }
    if (result.status === 'error') {
      record.counts.error += 1;
      record.errors.push({ domain, code: result.error.code, message: result.error.message });
      continue;
    }
    const mark = entry.rejoin ?? answeredAt;
    if (result.status === 'not_found') {
      record.counts.not_found += 1;
      record.domains[domain] = outcomeOf(batch, entry, mark, [], false);
      continue;
    }
    record.counts.ok += 1;
    const start = entry.start === null ? undefined : Date.parse(entry.start);
    const already = new Set((entry.pushed ?? []).map(([id]) => id));
    const kept: Signal[] = [];
    let oldest: number | undefined;
    for (const signal of result.signals) {
      const at = Date.parse(signal.detected_at);
      if (oldest === undefined || at < oldest) oldest = at;
      const wanted =
        (start === undefined || at > start) && !already.has(signal.signal_id) && (before === undefined || at < before);
      if (!wanted) {
        record.overlap.signals += 1;
        continue;
      }
      kept.push(signal);
      lines.push({ domain, ...signal });
    }
    const returned = result.signals.length;
    const total = result.coverage?.total_after_filters;
    const more = typeof total === 'number' ? total > returned : returned >= batch.limit;
    const cut = more && oldest !== undefined && (start === undefined || oldest > start);
    // Cut short at the largest `limit`, a domain cannot be reached further by `detected_after`: not "behind".
    const behind = cut && batch.limit < MAX_SIGNALS_PER_CALL;
    const outcome = outcomeOf(batch, entry, behind ? null : mark, kept, behind);
    if (cut && !behind) {
      outcome.missing = typeof total === 'number' ? total - returned : 0;
      const types = result.coverage?.signal_types_available ?? [];
      if (!batch.signal_types && types.length > 0) {
        const received = [...(entry.pushed ?? []), ...kept.map((x): [string, string] => [x.signal_id, x.detected_at])];
        outcome.narrow = { types, received };
      }
    }
    record.domains[domain] = outcome;
  }
  record.counts.lines = lines.length;
  record.overlap.credits = record.overlap.signals * CREDITS.perEnrichedSignal;
  return { lines, record };
}

/**
 * A domain's new state: its watermark (null: unchanged) and the pushed signals to remember, those above the
 * watermark it will have (all of them while it is behind) or inside the lookback window under it.
 */
function outcomeOf(
  batch: PushBatch,
  entry: PushBatchDomain,
  through: string | null,
  kept: readonly Signal[],
  behind: boolean,
): DomainOutcome {
  const mark = through !== null && (entry.through === null || through > entry.through) ? through : entry.through;
  const lookback = batch.lookback_ms ?? 0;
  const floor = mark === null ? undefined : Date.parse(mark) - lookback;
  const remembered = [...(entry.pushed ?? []), ...kept.map((s): [string, string] => [s.signal_id, s.detected_at])];
  const pushed = floor === undefined ? remembered : remembered.filter(([, at]) => Date.parse(at) > floor);
  const outcome: DomainOutcome = { through: behind ? null : through, pushed, ...(behind ? { behind: true } : {}) };
  if (lookback > 0 && floor !== undefined) {
    // Everything pushed after the lowest time this domain has been asked from is remembered, down to the floor.
    const from = entry.cover ?? entry.start;
    outcome.cover = new Date(from === null ? floor : Math.max(Date.parse(from), floor)).toISOString();
  }
  return outcome;
}

/** Records a batch whose retries are spent: its domains keep their watermarks, so the next run asks again. */
export async function recordFailedPushBatch(
  store: Store,
  request: { run: PushRunRef; index: number; message: string },
): Promise<BatchResult> {
  const { run, index, message } = request;
  const batch = JSON.parse(await store.readText(pushBatchKey(run, index))) as PushBatch;
  const record = emptyRecord(batch);
  record.failed = true;
  record.counts.error = batch.domains.length;
  record.errors = batch.domains.map(({ domain }) => ({ domain, code: 'batch_failed', message }));
  await writeBatchRecord(store, run, record);
  return { index, reused: false, failed: true, counts: record.counts };
}

export async function readBatchRecord(
  store: Store,
  run: PushRunRef,
  index: number,
): Promise<PushBatchRecord | undefined> {
  return readJsonIfPresent<PushBatchRecord>(store, batchDoneKey(run, index));
}

async function writeBatchRecord(store: Store, run: PushRunRef, record: PushBatchRecord): Promise<void> {
  await store.writeText(batchDoneKey(run, record.index), JSON.stringify(record), { contentType: 'application/json' });
}

function emptyRecord(batch: PushBatch): PushBatchRecord {
  return {
    index: batch.index,
    round: batch.round,
    detected_after: batch.detected_after,
    answered_at: null,
    counts: zeroCounts(),
    calls: 0,
    overlap: { signals: 0, credits: 0 },
    domains: {},
    errors: [],
    failed: false,
  };
}
