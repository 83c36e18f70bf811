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

type InputRecords = Awaited<ReturnType<typeof openInputRecords>>;

async function prepare(
  openStore: (url: string) => Store,
  request: PrepareRequest,
  stopAfterBatches = Number.POSITIVE_INFINITY,
): Promise<PreparedInput | PreparedStart> {
  const { job } = request;
  const out = openStore(job.output);
  const done = await out.stat(preparedKey(job));
  if (done) return JSON.parse(await out.readText(preparedKey(job))) as PreparedInput;

  const files = new BatchFiles(out, job, request.batchSize);
  const heartbeat = throttle(() => Context.current().heartbeat(files.stats.rows), 5000);
  // Past a size, first occurrences are sorted out on local disk, so that memory stays flat as the input grows; so
  // are the duplicates, until the batches that answer them are known.
  const sorting: Sorting = {
    kind: job.kind,
    files,
    seen: new SpillingDedupe(),
    duplicates: new DuplicateSpill(),
    heartbeat,
    stopAfterBatches,
  };
  let reading: InputRecords | undefined;
  let duplicateFiles = 0;
  try {
    reading = await openInputRecords(openStore, job.kind, request);
    await sortRecords(reading.records, sorting);
    if (files.bulkBatchesStarted() < stopAfterBatches) await batchDeferredRecords(sorting);
    if (files.bulkBatchesStarted() >= stopAfterBatches) {
      // The input goes on: the rest (and the invalid records so far) is the whole preparation's to write.
      await files.settle();
      return { complete: false, batches: files.bulkBatchesStarted() };
    }
    await files.writeRest();
    duplicateFiles = await sorting.duplicates.publish(out, job, files.starts, heartbeat);
  } finally {
    await Promise.all([sorting.seen.close(), sorting.duplicates.close()]);
  }
  if (files.stats.rows === 0) throw new InputError(`input ${request.input} has no data rows`);

  const prepared = summarize(request, files, reading, duplicateFiles);
  await out.writeText(preparedKey(job), JSON.stringify(prepared, null, 2));
  return prepared;
}

/** What sorting the input's records into batches works with. */
interface Sorting {
  kind: JobKind;
  files: BatchFiles;
  /** First occurrences, by identifier: a later row with the same one is a duplicate. */
  seen: SpillingDedupe;
  duplicates: DuplicateSpill;
  heartbeat: () => void;
  stopAfterBatches: number;
}

/**
 * Identifies each record and sends it where it belongs: an invalid record to the invalid parts, a duplicate to the
 * duplicate spill, a first occurrence to its series' batch (or, past the dedupe's memory, to its spill, see
 * `batchDeferredRecords`). Stops once `stopAfterBatches` bulk batches are begun.
 */
async function sortRecords(records: AsyncIterable<InputRecord>, sorting: Sorting): Promise<void> {
  const { kind, files, seen, duplicates } = sorting;
  for await (const record of records) {
    if (files.bulkBatchesStarted() >= sorting.stopAfterBatches) break;
    files.stats.rows += 1;
    sorting.heartbeat();
    const outcome = identifyRecord(record);
    if (!outcome.ok) {
      await files.addInvalid(record, outcome.reason);
      continue;
    }
    const series = seriesOf(outcome.role, kind);
    const line = () => JSON.stringify(batchLine(record, outcome, kind));
    const verdict = await seen.add(outcome.key, record.row, line);
    if (verdict === 'duplicate') {
      files.stats.duplicates += 1;
      await duplicates.add(series, seen.firstOrder(outcome.key) ?? record.row, line());
    } else if (verdict === 'new') await files.add(series, line(), record.row);
  }
}

/** Batches the first occurrences the dedupe deferred to disk, now that every row has been read. */
async function batchDeferredRecords(sorting: Sorting): Promise<void> {
  const { kind, files, seen, duplicates } = sorting;
  const onDuplicate = (first: number, text: string) => duplicates.add(seriesOfLine(text, kind), first, text);
  for await (const deferred of seen.drain(onDuplicate)) {
    sorting.heartbeat();
    const parsed = JSON.parse(deferred) as BatchItem;
    await files.add(seriesOfParsed(parsed, kind), deferred, parsed.row);
  }
  files.stats.duplicates += seen.deferredDuplicates;
}

/** `work/_prepared.json`: what the preparation read and wrote. */
function summarize(
  request: PrepareRequest,
  files: BatchFiles,
  reading: InputRecords | undefined,
  duplicateFiles: number,
): PreparedInput {
  const { stats, starts } = files;
  const columns = reading?.columns();
  const skipped = reading?.skippedLines() ?? 0;
  return {
    input: request.input,
    rows: stats.rows,
    distinct: stats.distinct,
    duplicates: stats.duplicates,
    invalid: stats.invalid,
    ...(skipped > 0 ? { skippedLines: skipped } : {}),
    batches: starts.bulk.length,
    batchSize: request.batchSize,
    ...(stats.singles > 0
      ? { singles: stats.singles, singleBatches: starts.single.length, singleBatchSize: SINGLE_BATCH_SIZE }
      : {}),
    ...(duplicateFiles > 0 ? { duplicateFiles } : {}),
    ...(columns ? { columns: describeChoice(columns) } : {}),
  };
}

/**
 * The batch files and invalid parts being written, with the counts of what was read. Writes run in the background,
 * at most `PENDING_WRITES` at once.
 */
class BatchFiles {
  readonly stats = { rows: 0, distinct: 0, singles: 0, duplicates: 0, invalid: 0, invalidParts: 0 };
  /** The first row of each batch begun, per series. */
  readonly starts: Record<BatchSeries, number[]> = { bulk: [], single: [] };
  private readonly out: Store;
  private readonly job: JobRef;
  private readonly sizes: Record<BatchSeries, number>;
  private gathering: Record<BatchSeries, string[]> = { bulk: [], single: [] };
  private invalid: Record<string, unknown>[] = [];
  private readonly pending = new Set<Promise<unknown>>();

  constructor(out: Store, job: JobRef, batchSize: number) {
    this.out = out;
    this.job = job;
    this.sizes = { bulk: batchSize, single: SINGLE_BATCH_SIZE };
  }

  /** Bulk batches begun, not counting one still gathering its lines. */
  bulkBatchesStarted(): number {
    return this.starts.bulk.length - (this.gathering.bulk.length > 0 ? 1 : 0);
  }

  async add(series: BatchSeries, line: string, row: number): Promise<void> {
    if (series === 'single') this.stats.singles += 1;
    else this.stats.distinct += 1;
    if (this.gathering[series].length === 0) this.starts[series].push(row);
    this.gathering[series].push(line);
    if (this.gathering[series].length >= this.sizes[series]) await this.writeBatch(series);
  }

  async addInvalid(record: InputRecord, reason: string): Promise<void> {
    this.stats.invalid += 1;
    this.invalid.push({
      status: 'invalid',
      row: record.row,
      ...recordFields(record),
      raw: clipRaw(record.raw),
      error: reason,
    });
    if (this.invalid.length >= INVALID_PER_PART) await this.writeInvalid();
  }

  /** Writes the batches and invalid records still gathering, and waits for every write. */
  async writeRest(): Promise<void> {
    for (const series of ['bulk', 'single'] as const)
      if (this.gathering[series].length > 0) await this.writeBatch(series);
    if (this.invalid.length > 0) await this.writeInvalid();
    await this.settle();
  }

  /** Waits for the writes in flight. */
  async settle(): Promise<void> {
    await Promise.all(this.pending);
  }

  private async writeBatch(series: BatchSeries): Promise<void> {
    const lines = this.gathering[series].join('\n') + '\n';
    const index = this.starts[series].length - 1;
    await this.enqueue(this.out.writeText(seriesBatchKey(this.job, series, index), lines));
    this.gathering[series] = [];
  }

  private async writeInvalid(): Promise<void> {
    const counts = { ...zeroCounts(), lines: this.invalid.length, invalid: this.invalid.length };
    const key = invalidPartKey(this.job, this.stats.invalidParts++);
    await this.enqueue(writeJobPart(this.out, this.job, key, this.invalid, counts));
    this.invalid = [];
  }

  private async enqueue(write: Promise<unknown>): Promise<void> {
    const tracked = write.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    if (this.pending.size >= PENDING_WRITES) await Promise.race(this.pending);
  }
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
