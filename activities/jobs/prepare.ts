import { Context } from '@temporalio/activity';
import { InputError } from '../../connectors/errors.ts';
import { describeChoice, type IdentifierRole } from '../../connectors/normalize/columns.ts';
import type { Identifier } from '../../connectors/normalize/identifiers.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type InputReading, identifyRecord, openInputRecords } from '../input/identify.ts';
import type { InputRecord } from '../input/read-input.ts';
import { zeroCounts } from '../run/parts.ts';
import { type BatchItem, recordFields } from './batch-file.ts';
import { DuplicateSpill } from './duplicate-spill.ts';
import { type BatchSeries, invalidPartKey, preparedKey, seriesBatchKey } from './layout.ts';
import { SpillingDedupe } from './spilling-dedupe.ts';
import { writeJobPart } from './tables.ts';
import type { JobKind, JobRef, PreparedInput, PreparedStart } from './types.ts';

/** The job's input and how it is read (its columns, encoding, sheet: activities/input/identify.ts). */
export interface PrepareRequest extends InputReading {
  job: JobRef;
  batchSize: number;
}

/** Rows identified without a domain per single-call batch: about 4 s of calls at 300 a minute. */
export const SINGLE_BATCH_SIZE = 20;

/** Invalid records per `invalid-NNNNN` part: the number of such parts follows from the invalid rows. */
export const INVALID_PER_PART = 10_000;
const PENDING_WRITES = 8;

/**
 * Reads the input once, identifies each row (its first usable identifier, normalized), dedupes, and writes batch
 * files: rows with a domain (or an address) to `work/batch-N.jsonl`, rows identified by LinkedIn URL or name to
 * `work/single-N.jsonl`; rows repeating an earlier row's identifier to `work/dups-…` (answered at the end) and rows
 * without a usable value as `invalid` records. Idempotent: `work/_prepared.json` is written last and returned as is
 * on a re-run.
 */
export async function prepareInput(openStore: (url: string) => Store, request: PrepareRequest): Promise<PreparedInput> {
  return (await prepare(openStore, request)) as PreparedInput;
}

/**
 * Writes only the first `batches` batch files of the input, the same files `prepareInput` writes, so that a job can
 * start calling the API while the rest is prepared; an input that ends before them is prepared whole.
 */
export async function prepareInputStart(
  openStore: (url: string) => Store,
  request: PrepareRequest & { batches: number },
): Promise<PreparedInput | PreparedStart> {
  return prepare(openStore, request, Math.max(1, request.batches));
}

/** Contacts are answered one call each (the spec has no bulk form): every row of `enrich-contacts` is a single. */
const seriesOf = (role: IdentifierRole, kind: JobKind): BatchSeries =>
  kind === 'enrich-contacts' ? 'single' : role === 'domain' || role === 'email' ? 'bulk' : 'single';

async function prepare(
  openStore: (url: string) => Store,
  request: PrepareRequest,
  stopAfterBatches = Number.POSITIVE_INFINITY,
): Promise<PreparedInput | PreparedStart> {
  const { job, batchSize } = request;
  const out = openStore(job.output);
  const done = await out.stat(preparedKey(job));
  if (done) return JSON.parse(await out.readText(preparedKey(job))) as PreparedInput;

  const batches: Record<BatchSeries, string[]> = { bulk: [], single: [] };
  const starts: Record<BatchSeries, number[]> = { bulk: [], single: [] };
  const sizes: Record<BatchSeries, number> = { bulk: batchSize, single: SINGLE_BATCH_SIZE };
  let invalid: unknown[] = [];
  const stats = { rows: 0, distinct: 0, singles: 0, duplicates: 0, invalid: 0, invalidParts: 0 };
  const pending = new Set<Promise<unknown>>();
  const heartbeat = throttle(() => Context.current().heartbeat(stats.rows), 5000);

  const enqueue = async (write: Promise<unknown>) => {
    const tracked = write.finally(() => pending.delete(tracked));
    pending.add(tracked);
    if (pending.size >= PENDING_WRITES) await Promise.race(pending);
  };
  const flushBatch = async (series: BatchSeries) => {
    const lines = batches[series].join('\n') + '\n';
    const index = starts[series].length - 1;
    await enqueue(out.writeText(seriesBatchKey(job, series, index), lines));
    batches[series] = [];
  };
  const flushInvalid = async () => {
    const counts = { ...zeroCounts(), lines: invalid.length, invalid: invalid.length };
    await enqueue(
      writeJobPart(out, job, invalidPartKey(job, stats.invalidParts++), invalid as Record<string, unknown>[], counts),
    );
    invalid = [];
  };

  const addToBatch = async (series: BatchSeries, line: string, row: number) => {
    if (series === 'single') stats.singles += 1;
    else stats.distinct += 1;
    if (batches[series].length === 0) starts[series].push(row);
    batches[series].push(line);
    if (batches[series].length >= sizes[series]) await flushBatch(series);
  };
  const bulkBatchesStarted = () => starts.bulk.length - (batches.bulk.length > 0 ? 1 : 0);

  // Past a size, first occurrences are sorted out on local disk, so that memory stays flat as the input grows; so
  // are the duplicates, until the batches that answer them are known.
  const seen = new SpillingDedupe();
  const duplicates = new DuplicateSpill();
  let duplicateFiles = 0;
  let reading: Awaited<ReturnType<typeof openInputRecords>> | undefined;
  try {
    reading = await openInputRecords(openStore, job.kind, request);
    for await (const record of reading.records) {
      if (bulkBatchesStarted() >= stopAfterBatches) break;
      stats.rows += 1;
      heartbeat();
      const outcome = identifyRecord(record);
      if (!outcome.ok) {
        stats.invalid += 1;
        invalid.push({
          status: 'invalid',
          row: record.row,
          ...recordFields(record),
          raw: clipRaw(record.raw),
          error: outcome.reason,
        });
        if (invalid.length >= INVALID_PER_PART) await flushInvalid();
        continue;
      }
      const series = seriesOf(outcome.role, job.kind);
      const line = () => JSON.stringify(batchLine(record, outcome, job.kind));
      const verdict = await seen.add(outcome.key, record.row, line);
      if (verdict === 'duplicate') {
        stats.duplicates += 1;
        await duplicates.add(series, seen.firstOrder(outcome.key) ?? record.row, line());
      } else if (verdict === 'new') await addToBatch(series, line(), record.row);
    }
    if (bulkBatchesStarted() < stopAfterBatches) {
      const onDuplicate = (first: number, text: string) => duplicates.add(seriesOfLine(text, job.kind), first, text);
      for await (const deferred of seen.drain(onDuplicate)) {
        heartbeat();
        const parsed = JSON.parse(deferred) as BatchItem;
        await addToBatch(seriesOfParsed(parsed, job.kind), deferred, parsed.row);
      }
      stats.duplicates += seen.deferredDuplicates;
    }
    if (bulkBatchesStarted() >= stopAfterBatches) {
      // The input goes on: the rest (and the invalid records so far) is the whole preparation's to write.
      await Promise.all(pending);
      return { complete: false, batches: bulkBatchesStarted() };
    }
    for (const series of ['bulk', 'single'] as const) if (batches[series].length > 0) await flushBatch(series);
    if (invalid.length > 0) await flushInvalid();
    await Promise.all(pending);
    duplicateFiles = await duplicates.publish(out, job, starts, heartbeat);
  } finally {
    await Promise.all([seen.close(), duplicates.close()]);
  }
  if (stats.rows === 0) throw new InputError(`input ${request.input} has no data rows`);

  const columns = reading?.columns();
  const skipped = reading?.skippedLines() ?? 0;
  const prepared: PreparedInput = {
    input: request.input,
    rows: stats.rows,
    distinct: stats.distinct,
    duplicates: stats.duplicates,
    invalid: stats.invalid,
    ...(skipped > 0 ? { skippedLines: skipped } : {}),
    batches: starts.bulk.length,
    batchSize,
    ...(stats.singles > 0
      ? { singles: stats.singles, singleBatches: starts.single.length, singleBatchSize: SINGLE_BATCH_SIZE }
      : {}),
    ...(duplicateFiles > 0 ? { duplicateFiles } : {}),
    ...(columns ? { columns: describeChoice(columns) } : {}),
  };
  await out.writeText(preparedKey(job), JSON.stringify(prepared, null, 2));
  return prepared;
}

function seriesOfLine(line: string, kind: JobKind): BatchSeries {
  return seriesOfParsed(JSON.parse(line) as BatchItem, kind);
}

function seriesOfParsed(parsed: BatchItem, kind: JobKind): BatchSeries {
  return parsed.m === undefined ? 'bulk' : seriesOf(parsed.m, kind);
}

function batchLine(record: InputRecord, outcome: Identifier, kind: JobKind): BatchItem {
  return {
    v: outcome.key,
    row: record.row,
    raw: outcome.raw,
    ...(record.id !== undefined ? { id: record.id } : {}),
    ...(record.cols ? { cols: record.cols } : {}),
    ...(seriesOf(outcome.role, kind) === 'single' ? { s: outcome.send, m: outcome.role } : {}),
  };
}

/** Longer raw values are cut in `invalid` records: a runaway line must not become a runaway output line. */
const RAW_LIMIT = 1_000;

function clipRaw(raw: unknown): unknown {
  if (raw === undefined) return null;
  const text =
    typeof raw === 'string' ? raw : raw !== null && typeof raw === 'object' ? JSON.stringify(raw) : undefined;
  if (text === undefined || text.length <= RAW_LIMIT) return raw;
  return `${text.slice(0, RAW_LIMIT)}… (${text.length} characters)`;
}

function throttle(fn: () => void, ms: number): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last >= ms) {
      last = now;
      fn();
    }
  };
}
