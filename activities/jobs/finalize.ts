import type { ObjectInfo, Store } from '../../connectors/storage/store.ts';
import { readPart, storedPart, writeManifest, writePart, zeroCounts } from '../parts.ts';
import { readBatch } from './batch-file.ts';
import { exportUnsaved, readExportRecord } from './intent-export.ts';
import { isOwnPartKey, manifestKey, partKey, partsPrefix } from './layout.ts';
import { readCheckedManifest } from './manifest-read.ts';
import { MANIFEST_SCHEMA_VERSION, ManifestSchema } from './output-schemas.ts';
import { BATCH_FAILED, readPaidLines } from './paid-lines.ts';
import { jobPartIdentity, redoneIdentity } from './part-identity.ts';
import { INVALID_PER_PART } from './prepare.ts';
import type {
  BatchResult,
  FinalizeRequest,
  JobRef,
  JobResult,
  Manifest,
  ManifestPart,
  VerificationSummary,
} from './types.ts';
import { type UnsavedTotals, unsavedTotals } from './unsaved.ts';

const STAT_CONCURRENCY = 16;
/** Parts named in a manifest's `details.redone_parts` / `details.ignored_parts`, at most. */
const REPORTED_PARTS = 100;

/** `part-00042.jsonl.gz` → the part table and 42 (the key is one of the job's own, `isOwnPartKey`). */
function partIndexOf(key: string): { table: 'part' | 'invalid'; index: number } {
  const match = /\/(part|invalid)-(\d+)\.[^/]*$/.exec(key);
  return { table: match?.[1] === 'invalid' ? 'invalid' : 'part', index: Number(match?.[2] ?? Number.NaN) };
}

/**
 * Writes `_manifest.json` last, from what the parts themselves record (not from the workflow's running totals), so
 * the manifest describes exactly what is in the bucket.
 */
export async function finalizeJob(store: Store, request: FinalizeRequest): Promise<JobResult> {
  const { job, prepared } = request;
  const parts: ManifestPart[] = [];
  const counts: Manifest['counts'] = {
    input_rows: prepared?.rows ?? 0,
    distinct: prepared?.distinct ?? 0,
    duplicates: prepared?.duplicates ?? 0,
    ok: 0,
    not_found: 0,
    error: 0,
    invalid: 0,
    lines: 0,
  };
  let summary: VerificationSummary | undefined;
  let credits = 0;
  let unsaved: UnsavedTotals = { credits: 0, unknownCalls: 0 };
  let done = 0;
  let failed = 0;
  const redone: { key: string; reason: string }[] = [];
  const ignored: { key: string; reason: string }[] = [];

  if (job.kind === 'intent-export') {
    const record = await readExportRecord(store, job);
    credits += record?.credits ?? 0;
    unsaved = exportUnsaved(record);
    if (record?.part && request.status !== 'failed') {
      parts.push(record.part);
      counts.lines = counts.ok = counts.input_rows = counts.distinct = record.part.lines;
      done = 1;
    }
  } else {
    const listed: ObjectInfo[] = [];
    // Only this job's own parts: a listing by prefix also returns deeper keys (another job's `<id>/parts/...` if an
    // id ever nested there, or anything else put under the folder), which are neither counted nor manifested.
    for await (const info of store.list(partsPrefix(job))) if (isOwnPartKey(job, info.key)) listed.push(info);
    const totals = { part: prepared?.batches ?? 0, invalid: Math.ceil((prepared?.invalid ?? 0) / INVALID_PER_PART) };
    // The listing's metadata where the store lists it (no second round trip per part), else the part's own.
    const stored = await mapLimited(listed, STAT_CONCURRENCY, async (info) => {
      const { table, index } = partIndexOf(info.key);
      if (index >= totals[table]) {
        return { key: info.key, read: { distrusted: `the job has no ${table} ${index} (it has ${totals[table]})` } };
      }
      const described = Object.keys(info.metadata).length > 0 ? info : await store.stat(info.key);
      return { key: info.key, read: storedPart(described, jobPartIdentity(job, index, table)) };
    });
    for (const { key, read } of stored) {
      const part = read.part;
      if (!part) {
        // Not this job's, or not a part at all: neither counted nor manifested, but said.
        if (read.distrusted && ignored.length < REPORTED_PARTS) ignored.push({ key, reason: read.distrusted });
        continue;
      }
      if (part.redone && redone.length < REPORTED_PARTS) redone.push({ key, reason: part.redone });
      parts.push({ key, lines: part.counts.lines, bytes: part.bytes, sha256: part.sha256 });
      const c = part.counts;
      counts.ok += c.ok;
      counts.not_found += c.not_found;
      counts.error += c.error;
      counts.invalid += c.invalid;
      counts.lines += c.lines;
      credits += c.credits;
      if (c.invalid === 0 && !part.partial) {
        done += 1;
        if (part.failed) failed += 1;
      }
      if (c.summary) summary = addSummary(summary, c.summary);
    }
    unsaved = await unsavedTotals(store, job);
  }

  const status = request.status === 'completed' && failed > 0 ? 'completed_with_errors' : request.status;
  const manifest: Manifest = {
    schema_version: MANIFEST_SCHEMA_VERSION,
    job_id: job.jobId,
    kind: job.kind,
    input: request.input,
    status,
    started_at: request.startedAt,
    finished_at: new Date().toISOString(),
    counts,
    ...(job.kind === 'verify-emails' ? { summary: summary ?? emptySummary() } : {}),
    // What the service charged as far as any answer said: saved answers plus answers paid for and then lost.
    credits_charged: credits + unsaved.credits,
    unsaved_answers: { credits: unsaved.credits, unknown_calls: unsaved.unknownCalls },
    batches: { total: prepared?.batches ?? (job.kind === 'intent-export' ? 1 : 0), done, failed },
    parts,
    ...(request.error ? { error: request.error } : {}),
    ...(request.details || redone.length || ignored.length
      ? {
          details: {
            ...request.details,
            ...(redone.length ? { redone_parts: redone } : {}),
            ...(ignored.length ? { ignored_parts: ignored } : {}),
          },
        }
      : {}),
  };
  await writeManifest(store, manifestKey(job), manifest);
  return toResult(store, job, manifest);
}

/** The result of a job already completed under this id, so that running it again does nothing. */
export async function findFinishedJob(store: Store, request: { job: JobRef }): Promise<JobResult | null> {
  // A manifest that is not one the kit wrote (too large, not JSON, not the schema) is not believed: the job runs,
  // reusing only the parts that prove themselves, and writes a manifest of its own over it.
  const read = await readCheckedManifest(store, manifestKey(request.job), ManifestSchema);
  const manifest = read?.manifest as Manifest | undefined;
  return manifest?.status === 'completed' ? toResult(store, request.job, manifest) : null;
}

/**
 * Publishes a batch whose retries are spent, marked failed so that a re-run retries it: the lines an earlier call
 * paid for are kept (with their credits), every other item becomes a `batch_failed` error line.
 */
export async function recordFailedBatch(
  store: Store,
  request: { job: JobRef; index: number; message: string },
): Promise<BatchResult> {
  const { job, index, message } = request;
  const key = partKey(job, index);
  const items = await readBatch(store, job, index);
  const field = job.kind === 'verify-emails' ? 'email' : 'domain';
  const identity = jobPartIdentity(job, index);
  const found = await readPart(store, key, identity);
  const paid = await readPaidLines(store, key, found.part, field);
  const earlier = new Map(paid.lines.map((line) => [String(line[field]), line]));
  const counts = { ...zeroCounts(), credits: paid.credits };
  const lines = items.map((item) => {
    const line = earlier.get(item.v) ?? {
      [field]: item.v,
      status: 'error',
      row: item.row,
      input: item.raw,
      error: { code: BATCH_FAILED, message },
    };
    counts.lines += 1;
    counts[line.status as 'ok' | 'not_found' | 'error'] += 1;
    return line;
  });
  await writePart(store, job.compression, key, lines, counts, 'failed', redoneIdentity(identity, found));
  return { index, reused: false, failed: true, counts };
}

function toResult(store: Store, job: JobRef, manifest: Manifest): JobResult {
  return {
    jobId: job.jobId,
    kind: job.kind,
    status: manifest.status,
    manifestUrl: store.urlOf(manifestKey(job)),
    counts: manifest.counts,
    credits: manifest.credits_charged,
    parts: manifest.parts.length,
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
