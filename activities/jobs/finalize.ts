import type { ObjectInfo, Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { jobManifestClaims } from '../../contract/manifest-place.ts';
import { ReadableManifestSchema, readPlacedManifest } from '../../contract/manifest-read.ts';
import { MANIFEST_SCHEMA_VERSION } from '../../contract/manifest-schemas.ts';
import { BATCH_FAILED, readPaidLines } from '../paid/paid-lines.ts';
import { chargedFields, endingFields, runFinalizer } from '../run/finalize-run.ts';
import { readPart, readPartLines, redoneIdentity, storedPart, writeTableParts, zeroCounts } from '../run/parts.ts';
import type { UnsavedAnswers } from '../run/unsaved-answers.ts';
import { matchedByOf, readSeriesBatch, recordFields } from './batch-file.ts';
import { writeCrmCsv } from './crm-csv.ts';
import type { FoldRecord } from './fold.ts';
import { exportUnsaved, readExportRecord } from './intent-export.ts';
import { checkJobIdentity, jobIdentityOf } from './job-identity.ts';
import {
  type BatchSeries,
  foldDoneKey,
  isOwnPartKey,
  isTableKey,
  manifestKey,
  partsPrefix,
  SINGLE_MARKER_BASE,
  seriesPartKey,
  tablePartKey,
  tablesPrefix,
  workPrefix,
} from './layout.ts';
import { jobPartIdentity, linesPartIdentity, partTableOf, partTableSize } from './part-identity.ts';
import { INVALID_PER_PART } from './prepare.ts';
import { encodeJobTables, tablesOfPart, writeJobPart } from './tables.ts';
import type {
  BatchResult,
  FinalizeRequest,
  JobRef,
  JobResult,
  Manifest,
  ManifestPart,
  PartCounts,
  VerificationSummary,
} from './types.ts';

const STAT_CONCURRENCY = 16;
/** Parts named in a manifest's `details.redone_parts` / `details.ignored_parts`, at most. */
const REPORTED_PARTS = 100;

/** A listed object with its metadata: the listing's where the store lists it (no round trip), else its own. */
async function withMetadata(store: Store, info: ObjectInfo): Promise<ObjectInfo | undefined> {
  return Object.keys(info.metadata).length > 0 ? info : store.stat(info.key);
}

/** What a job's own parts (or an intent export's record) hold, added up. */
interface JobGathered {
  counts: Manifest['counts'];
  parts: ManifestPart[];
  /** The lines parts manifested, whose tables are written or found next. */
  manifested: string[];
  summary: VerificationSummary | undefined;
  credits: number;
  done: number;
  failed: number;
  calls: { bulk: number; single: number };
  redone: { key: string; reason: string }[];
  ignored: { key: string; reason: string }[];
  savedCalls: Map<number, Set<string>>;
  unsaved?: UnsavedAnswers;
}

/** What a job writes besides its parts: the fold's record read, the tables, the CRM's CSV. */
interface JobWritten {
  fold: FoldRecord | undefined;
  /** The job's rows as one CSV (with `--format csv`): not a part, the file a CRM imports. */
  crmCsv: ManifestPart | undefined;
}

/**
 * Writes `_manifest.json` last, from what the parts themselves record (not from the workflow's running totals), so
 * the manifest describes exactly what is in the bucket.
 */
export const finalizeJob = runFinalizer<FinalizeRequest, JobGathered, JobWritten, Manifest, JobResult>({
  // Answers still on their way to attempts Temporal gave up on are waited for: they say what they cost.
  markers: ({ job }) => job,
  manifestKey: ({ job }) => manifestKey(job),
  gather: (store, request) =>
    request.job.kind === 'intent-export' ? gatherExport(store, request) : gatherJobParts(store, request),
  write: writeJobExtras,
  manifest: jobManifest,
  writeAfterFailedManifest: withFailedRowsFile,
  afterManifest: async (store, { job }, manifest) => {
    if (manifest.status === 'completed') await removeWork(store, job);
    return toResult(store, job, manifest);
  },
  resultWithoutManifest: (store, { job }, manifest, refused) => ({
    ...toResult(store, job, manifest),
    manifestRefused: refused.message,
  }),
});

function emptyGathered(request: FinalizeRequest): JobGathered {
  const { prepared } = request;
  return {
    counts: {
      input_rows: prepared?.rows ?? 0,
      distinct: (prepared?.distinct ?? 0) + (prepared?.singles ?? 0),
      duplicates: prepared?.duplicates ?? 0,
      ok: 0,
      not_found: 0,
      error: 0,
      invalid: 0,
      lines: 0,
      ...(prepared?.skippedLines ? { skipped_lines: prepared.skippedLines } : {}),
    },
    parts: [],
    manifested: [],
    summary: undefined,
    credits: 0,
    done: 0,
    failed: 0,
    calls: { bulk: 0, single: 0 },
    redone: [],
    ignored: [],
    savedCalls: new Map(),
  };
}

/** An intent export: its one part and what it paid, from its own record. */
async function gatherExport(store: Store, request: FinalizeRequest): Promise<JobGathered> {
  const gathered = emptyGathered(request);
  const { counts } = gathered;
  const record = await readExportRecord(store, request.job);
  gathered.credits += record?.credits ?? 0;
  gathered.unsaved = exportUnsaved(record);
  if (record?.part && request.status !== 'failed') {
    gathered.parts.push(record.part);
    counts.lines = counts.ok = counts.input_rows = counts.distinct = record.part.lines;
    gathered.done = 1;
  }
  return gathered;
}

/** Every part that proves it is this job's, counted; the others named (at most `REPORTED_PARTS`) and left out. */
async function gatherJobParts(store: Store, request: FinalizeRequest): Promise<JobGathered> {
  const { job, prepared } = request;
  const gathered = emptyGathered(request);
  const { counts, parts, calls, redone, ignored, savedCalls, manifested } = gathered;
  const listed: ObjectInfo[] = [];
  // Only this job's own parts: a listing by prefix also returns deeper keys (another job's `<id>/parts/...` if an
  // id ever nested there, or anything else put under the folder), which are neither counted nor manifested.
  for await (const info of store.list(partsPrefix(job))) if (isOwnPartKey(job, info.key)) listed.push(info);
  // The listing's metadata where the store lists it (no second round trip per part), else the part's own.
  const stored = await mapLimited(listed, STAT_CONCURRENCY, async (info) => {
    const { table, index } = partTableOf(job, info.key);
    const size = partTableSize(prepared, table, INVALID_PER_PART);
    // A job that failed before its input was read through has no batch count: the batches that ran are still
    // its own (their identity is checked below), and what was paid for them is kept.
    if (!(index >= 0 && (index < size || !prepared))) {
      return { key: info.key, read: { distrusted: `the job has no ${table} ${index} (it has ${size})` } };
    }
    return { key: info.key, read: storedPart(await withMetadata(store, info), jobPartIdentity(job, index, table)) };
  });
  for (const { key, read } of stored) {
    const part = read.part;
    if (!part) {
      // Not this job's (another job's, past its batches, its metadata spoiled): neither counted nor manifested.
      if (read.distrusted && ignored.length < REPORTED_PARTS) ignored.push({ key, reason: read.distrusted });
      continue;
    }
    if (part.redone && redone.length < REPORTED_PARTS) redone.push({ key, reason: part.redone });
    manifested.push(key);
    const batch = partIndexOf(key);
    if (batch !== undefined && part.calls.length > 0) savedCalls.set(batch, new Set(part.calls));
    parts.push({
      key,
      lines: part.counts.lines,
      bytes: part.bytes,
      sha256: part.sha256,
      table: 'lines',
      format: 'jsonl',
    });
    const c = part.counts;
    const name = key.slice(key.lastIndexOf('/') + 1);
    const single = /^single-\d/.test(name);
    const batchPart = name.startsWith('part-') || single;
    if (single) calls.single += c.calls ?? 0;
    else if (name.startsWith('part-')) calls.bulk += c.calls ?? (c.lines > 0 ? 1 : 0);
    counts.ok += c.ok;
    counts.not_found += c.not_found;
    counts.error += c.error;
    counts.invalid += c.invalid;
    counts.lines += c.lines;
    gathered.credits += c.credits;
    if (batchPart && !part.partial) {
      gathered.done += 1;
      if (part.failed) gathered.failed += 1;
    }
    if (c.summary) gathered.summary = addSummary(gathered.summary, c.summary);
  }
  return gathered;
}

/** The fold's duplicates, the table parts of the manifested lines, and the CRM's CSV (with `--format csv`). */
async function writeJobExtras(store: Store, request: FinalizeRequest, gathered: JobGathered): Promise<JobWritten> {
  const { job, prepared } = request;
  if (job.kind === 'intent-export') return { fold: undefined, crmCsv: undefined };
  const fold = await readJsonIfPresent<FoldRecord>(store, foldDoneKey(job));
  if (fold) gathered.counts.duplicates += fold.folded;
  gathered.parts.push(...(await tableParts(store, job, gathered.manifested)));
  // A failed job (perhaps stopped by a full disk) writes its manifest first, while a small file still fits, and its
  // rows file after it (withFailedRowsFile, through the finalize skeleton): the manifest says what the job was charged whatever the rows file takes.
  const crmCsv =
    job.formats?.includes('csv') && request.status !== 'failed'
      ? await writeCrmCsv(store, job, gathered.parts, prepared?.columns)
      : undefined;
  return { fold, crmCsv };
}

/** A failed job, its manifest written: its rows file (`--format csv`), and the manifest naming it. */
async function withFailedRowsFile(
  store: Store,
  { job, prepared }: FinalizeRequest,
  manifest: Manifest,
  gathered: JobGathered,
): Promise<Manifest> {
  if (job.kind === 'intent-export' || !job.formats?.includes('csv')) return manifest;
  return { ...manifest, rows_csv: await writeCrmCsv(store, job, gathered.parts, prepared?.columns) };
}

function jobManifest(
  store: Store,
  request: FinalizeRequest,
  gathered: JobGathered,
  written: JobWritten,
  lost: UnsavedAnswers,
): Manifest {
  const { job, prepared } = request;
  const { counts, summary, calls, done, failed } = gathered;
  const { fold, crmCsv } = written;
  const status = request.status === 'completed' && failed > 0 ? 'completed_with_errors' : request.status;
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    job_id: job.jobId,
    kind: job.kind,
    input: request.input,
    output: store.url,
    status,
    started_at: request.startedAt,
    finished_at: new Date().toISOString(),
    counts,
    ...(job.kind === 'verify-emails' ? { summary: summary ?? emptySummary() } : {}),
    ...chargedFields(gathered.credits, lost),
    ...(job.kind === 'intent-export' ? {} : { calls }),
    ...(fold ? { overlap: fold.overlap } : {}),
    ...(prepared?.columns ? { columns: prepared.columns } : {}),
    batches: {
      total: (prepared?.batches ?? (job.kind === 'intent-export' ? 1 : 0)) + (prepared?.singleBatches ?? 0),
      done,
      failed,
    },
    parts: gathered.parts,
    ...(crmCsv ? { rows_csv: crmCsv } : {}),
    ...endingFields({ error: request.error, details: jobDetails(request, gathered) }),
  };
}

/** The request's details, with the parts done again and those left out named (at most `REPORTED_PARTS` each). */
function jobDetails(request: FinalizeRequest, { redone, ignored }: JobGathered): Record<string, unknown> | undefined {
  if (redone.length === 0 && ignored.length === 0) return request.details;
  return {
    ...request.details,
    ...(redone.length ? { redone_parts: redone } : {}),
    ...(ignored.length ? { ignored_parts: ignored } : {}),
  };
}

/**
 * Removes a completed job's `work/` objects once its manifest is written: the batch files hold every input value
 * (every address, for a verification) in clear, and nothing reads them again (running the same command again finds
 * the manifest; a re-run in another format prepares the input again). A job that did not complete keeps them, since
 * running it again sends its failed batches from them. Best effort: what a failure leaves is removed the next time
 * the same command finds the job finished.
 */
export async function removeWork(store: Store, job: JobRef): Promise<void> {
  try {
    const keys: string[] = [];
    for await (const info of store.list(workPrefix(job))) keys.push(info.key);
    await mapLimited(keys, STAT_CONCURRENCY, (key) => store.delete(key));
  } catch {
    // Left for the next run of the same command.
  }
}

/**
 * The table parts of the manifested lines parts, in every requested format. A lines part without its tables (a job
 * first run without that `--format`, its parts reused) gets them now, from its lines: no API call.
 */
async function tableParts(store: Store, job: JobRef, linesKeys: readonly string[]): Promise<ManifestPart[]> {
  const formats = job.formats ?? [];
  if (formats.length === 0) return [];
  const listed = new Map<string, ObjectInfo>();
  for await (const info of store.list(tablesPrefix(job))) if (isTableKey(job, info.key)) listed.set(info.key, info);
  const perPart = await mapLimited([...linesKeys], STAT_CONCURRENCY, async (key) => {
    const tables = tablesOfPart(job, key);
    const wanted = tables.flatMap((table) => formats.map((format) => tablePartKey(job, table, key, format)));
    const identity = linesPartIdentity(job, key);
    // A table part that does not prove itself (by its metadata and size) is written again from the lines part.
    const found = await Promise.all(
      wanted.map(async (tableKey) => {
        const info = listed.get(tableKey);
        return info ? storedPart(await withMetadata(store, info), identity).part : undefined;
      }),
    );
    if (found.every((part) => part !== undefined)) {
      return found.map((part, i) => ({
        key: wanted[i] as string,
        lines: part.counts.lines,
        bytes: part.bytes,
        sha256: part.sha256,
        ...(part.table ? { table: part.table } : {}),
        ...(part.format ? { format: part.format } : {}),
      }));
    }
    const lines = await readPartLines(store, key);
    return writeTableParts(store, encodeJobTables(job, key, lines), 'done', identity);
  });
  return perPart.flat();
}

/** The result of a job already completed under this id, so that running it again does nothing. */
export async function findFinishedJob(
  store: Store,
  request: { job: JobRef; input?: string | null; column?: string; options?: Record<string, unknown> },
): Promise<JobResult | null> {
  // The job's first activity: a start of this id with another input or options is refused before anything runs.
  if (request.input !== undefined) {
    const job = request.options ? { ...request.job, options: request.options } : request.job;
    await checkJobIdentity(store, request.job, jobIdentityOf(job, request.input, request.column));
  }
  // A manifest that is not one the kit wrote (too large, not JSON, not the schema) or not this job's in its own place
  // (another job's id, a part outside the job's folder) is not believed: the job runs, reusing only the parts that
  // prove themselves, and writes a manifest of its own over it.
  const read = await readPlacedManifest(store, manifestKey(request.job), ReadableManifestSchema, jobManifestClaims);
  const manifest = read?.manifest as Manifest | undefined;
  if (manifest?.status !== 'completed') return null;
  // Asked now for a format it was not written in: not finished (its parts are reused, its tables written).
  const written = new Set(manifest.parts.map((part) => part.format));
  if ((request.job.formats ?? []).some((format) => !written.has(format))) return null;
  await removeWork(store, request.job);
  return toResult(store, request.job, manifest);
}

/**
 * Publishes a batch whose retries are spent, marked failed so that a re-run retries it: the lines an earlier call
 * paid for are kept (with their credits), every other item becomes a `batch_failed` error line.
 */
export async function recordFailedBatch(
  store: Store,
  request: { job: JobRef; index: number; message: string; series?: BatchSeries },
): Promise<BatchResult> {
  const { job, index, message } = request;
  const series = request.series ?? 'bulk';
  const key = seriesPartKey(job, series, index);
  const items = await readSeriesBatch(store, job, series, index);
  const field = job.kind === 'verify-emails' ? 'email' : 'domain';
  const identity = linesPartIdentity(job, key);
  const found = await readPart(store, key, identity);
  const existing = found.part;
  const paid = await readPaidLines(store, key, existing, field);
  // Single-call lines are keyed by row (their domain is what the service resolved); bulk lines by their value.
  const keyOf = (line: Record<string, unknown>) => (series === 'single' ? String(line['row']) : String(line[field]));
  const earlier = new Map(paid.lines.map((line) => [keyOf(line), line]));
  const counts: PartCounts = { ...zeroCounts(), credits: paid.credits, calls: existing?.counts.calls ?? 0 };
  const lines = items.map((item) => {
    const line = earlier.get(series === 'single' ? String(item.row) : item.v) ?? {
      [field]: series === 'single' ? null : item.v,
      status: 'error',
      row: item.row,
      ...recordFields(item),
      ...(field === 'domain' ? { matched_by: matchedByOf(item) } : {}),
      input: item.raw,
      error: { code: BATCH_FAILED, message },
    };
    counts.lines += 1;
    if (line['status'] === 'duplicate') counts.duplicate = (counts.duplicate ?? 0) + 1;
    else counts[line['status'] as 'ok' | 'not_found' | 'error'] += 1;
    return line;
  });
  // The calls whose answers the earlier part held are still held: their lines are kept.
  const writeAs = redoneIdentity(identity, found);
  await writeJobPart(store, job, key, lines, counts, 'failed', existing?.calls ?? [], writeAs);
  return { index, reused: false, failed: true, counts };
}

/** The batch number of a `part-NNNNN` or `single-NNNNN` key, as its call markers carry it (else undefined). */
function partIndexOf(key: string): number | undefined {
  const match = /\/(part|single)-(\d{5,})\.jsonl(\.gz)?$/.exec(key);
  if (!match) return undefined;
  return Number(match[2]) + (match[1] === 'single' ? SINGLE_MARKER_BASE : 0);
}

function toResult(store: Store, job: JobRef, manifest: Manifest): JobResult {
  return {
    jobId: job.jobId,
    kind: job.kind,
    status: manifest.status,
    manifestUrl: store.urlOf(manifestKey(job)),
    counts: manifest.counts,
    credits: manifest.credits_charged,
    parts: manifest.parts.filter((part) => part.table === undefined || part.table === 'lines').length,
    ...(manifest.summary ? { summary: manifest.summary } : {}),
    ...(manifest.unsaved_answers ? { unsavedAnswers: manifest.unsaved_answers } : {}),
  };
}

const emptySummary = (): VerificationSummary => ({ total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 });

function addSummary(into: VerificationSummary | undefined, add: VerificationSummary): VerificationSummary {
  const sum = into ?? emptySummary();
  sum.total += add.total;
  sum.deliverable += add.deliverable;
  sum.undeliverable += add.undeliverable;
  sum.risky += add.risky;
  sum.unknown += add.unknown;
  return sum;
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
