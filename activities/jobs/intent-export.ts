import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { chargedNothing, FAILURE_TYPE, SignalApiError, UnexpectedResponseError } from '../../connectors/errors.ts';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { CreateIntentExportParams } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { partContentType } from '../run/parts.ts';
import { exportLinkKey, exportStateKey, partKey } from './layout.ts';
import { JsonlLineChecker } from './line-check.ts';
import type { JobRef, ManifestPart } from './types.ts';

/**
 * The export request: the client's, without `has_email`/`has_mobile`, which spec 4.10 does not list for the export
 * (only for the contacts search) and the command does not offer for it.
 */
export type IntentExportRequest = Omit<CreateIntentExportParams, 'has_email' | 'has_mobile'>;

export interface SubmittedExport {
  exportId: string;
  credits: number;
}

export interface ExportState {
  /** The status the service reported; undefined when its answer had none. */
  status: string | undefined;
  reason?: string;
  rowCount?: number;
  /** Whether the answer carried a download link. */
  downloadable: boolean;
  /** The answer, compact and without the signed link, to quote in a failure message. */
  said: string;
}

/** A submit whose outcome stayed unknown and was then submitted again on the user's word (`--resubmit`). */
interface AbandonedSubmit {
  started_at: string;
  reason: string;
  /** What the failed answer said it charged; null when nothing said. */
  credits: number | null;
}

/** `work/export.json`: the export of this job, written before the submit is sent and as soon as its id is known. */
export interface ExportRecord {
  /** `submitting` while a submit's outcome is not known; `submitted` once the id is saved. */
  state?: 'submitting' | 'submitted' | 'not_submitted';
  export_id?: string;
  /** Credits the submit's answer reported. */
  credits: number;
  started_at?: string;
  /** Why the pending submit's outcome is unknown, and what its answer said it charged (null: nothing said). */
  outcome?: string;
  outcome_credits?: number | null;
  abandoned?: AbandonedSubmit[];
  part?: ManifestPart;
}

export async function readExportRecord(store: Store, job: JobRef): Promise<ExportRecord | undefined> {
  return readJsonIfPresent<ExportRecord>(store, exportStateKey(job));
}

/** Submits that may have been paid for without their export being used (reported in the manifest). */
export function exportUnsaved(record: ExportRecord | undefined): { credits: number; unknownCalls: number } {
  const out = { credits: 0, unknownCalls: 0 };
  const lost: (number | null | undefined)[] = (record?.abandoned ?? []).map((a) => a.credits);
  if (record?.state === 'submitting') lost.push(record.outcome_credits ?? null);
  for (const credits of lost) {
    if (typeof credits === 'number') out.credits += credits;
    else out.unknownCalls += 1;
  }
  return out;
}

/**
 * Submits the export once per job. The record under `work/export.json` is written before the request is sent
 * (`submitting`) and replaced by the export id as soon as the answer holds one, even an answer of another shape
 * than expected. A submit that ends without a known outcome (a reset, a timeout, a 5xx that does not say it charged
 * nothing, a worker that died before saving the id) is never sent again on its own: the job stops with a message
 * naming the possible charge, and `resubmit` (the CLI's `--resubmit`) is the user's word to submit again.
 */
export async function submitIntentExport(
  client: SignalClient,
  store: Store,
  request: { job: JobRef; request: IntentExportRequest; resubmit?: boolean },
): Promise<SubmittedExport> {
  const { job } = request;
  const key = exportStateKey(job);
  const save = (record: ExportRecord) =>
    store.writeText(key, JSON.stringify(record), { contentType: 'application/json' });
  const existing = await readExportRecord(store, job);
  if (existing?.export_id) return { exportId: existing.export_id, credits: existing.credits };
  let abandoned = existing?.abandoned ?? [];
  if (existing?.state === 'submitting') {
    if (!request.resubmit) throw outcomeUnknown(job, request.request, existing);
    abandoned = [
      ...abandoned,
      {
        started_at: existing.started_at ?? '',
        reason: existing.outcome ?? 'the worker stopped before the answer was saved',
        credits: existing.outcome_credits ?? null,
      },
    ];
  }
  const pending: ExportRecord = { state: 'submitting', credits: 0, started_at: new Date().toISOString(), abandoned };
  await save(pending);
  let created: { export_id: string; credits: number };
  try {
    created = await client.createIntentExport(request.request, { retry: false });
  } catch (error) {
    const id = idInUnexpectedAnswer(error);
    if (id !== undefined) {
      const credits = (error as SignalApiError).creditsCharged ?? 0;
      await save({ state: 'submitted', export_id: id, credits, abandoned });
      return { exportId: id, credits };
    }
    if (chargedNothing(error)) {
      await save({ state: 'not_submitted', credits: 0, abandoned });
      throw error;
    }
    const failed: ExportRecord = {
      ...pending,
      outcome: error instanceof Error ? error.message : String(error),
      outcome_credits: error instanceof SignalApiError ? (error.creditsCharged ?? null) : null,
    };
    await save(failed);
    throw outcomeUnknown(job, request.request, failed);
  }
  await save({ state: 'submitted', export_id: created.export_id, credits: created.credits, abandoned });
  return { exportId: created.export_id, credits: created.credits };
}

/** The export id of a 2xx answer the client could not parse whole (tolerant in: the id is all the kit needs). */
function idInUnexpectedAnswer(error: unknown): string | undefined {
  if (!(error instanceof UnexpectedResponseError)) return undefined;
  const body = error.body as Record<string, unknown> | null | undefined;
  if (!body || typeof body !== 'object') return undefined;
  for (const field of ['export_id', 'id', 'exportId']) {
    const value = body[field];
    if ((typeof value === 'string' && value.trim() !== '') || typeof value === 'number') return String(value);
  }
  return undefined;
}

function outcomeUnknown(job: JobRef, request: IntentExportRequest, record: ExportRecord): ApplicationFailure {
  const topics = new Set(request.topic_ids).size;
  const said =
    typeof record.outcome_credits === 'number'
      ? `; the failed answer said ${record.outcome_credits} credits were charged`
      : '';
  const why = record.outcome ?? 'the worker stopped before the answer was saved';
  return ApplicationFailure.create({
    type: FAILURE_TYPE.exportOutcomeUnknown,
    nonRetryable: true,
    message:
      `the export submit of job ${job.jobId} (sent ${record.started_at ?? 'earlier'}) has an unknown outcome: ${why}. ` +
      `The service may have created the export and charged its flat fee for ${topics} topic(s)${said}. ` +
      'The kit does not submit again on its own; to submit again (and pay again if the first submit was charged), ' +
      'run the same command with --resubmit.',
  });
}

/**
 * The export's state (an API call, so it runs on the rate-limited queue). When the export is ready and `job` is
 * given, its signed download link is kept under `work/export-link.json` for the download activity, which then makes
 * no API call of its own; the link stays out of workflow history.
 */
export async function getIntentExportStatus(
  client: SignalClient,
  store: Store | undefined,
  request: { exportId: string; job?: JobRef },
): Promise<ExportState> {
  let answer: Record<string, unknown>;
  try {
    const { requestId: _r, credits: _c, ...state } = await client.getIntentExport(request.exportId, { retry: false });
    answer = state;
  } catch (error) {
    // Tolerant in: an answer of another shape than expected is still read for its status and link.
    const body = error instanceof UnexpectedResponseError ? error.body : undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw error;
    answer = body as Record<string, unknown>;
  }
  const { download_url: link, creditsRemaining: _cr, ...rest } = answer;
  const status = typeof answer['status'] === 'string' ? answer['status'] : undefined;
  const downloadable = typeof link === 'string' && link !== '';
  // Any answer with a link is kept (the workflow decides whether a status it does not know is ready).
  if (store && request.job && downloadable) {
    const expires = answer['expires_at'];
    const saved: ExportLink = { download_url: link, expires_at: typeof expires === 'string' ? expires : null };
    await store.writeText(exportLinkKey(request.job), JSON.stringify(saved));
  }
  const out: ExportState = { status, downloadable, said: quote(rest) };
  const error = answer['error'] as { message?: unknown } | string | undefined;
  const reason = typeof error === 'string' ? error : error?.message;
  if (typeof reason === 'string' && reason !== '') out.reason = reason;
  if (typeof answer['row_count'] === 'number') out.rowCount = answer['row_count'];
  return out;
}

/** A compact JSON rendering, cut to a few hundred characters. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

interface ExportLink {
  download_url: string;
  expires_at: string | null;
}

/** The failure type that asks the workflow for a fresh link (one more status call) before downloading again. */
export const DOWNLOAD_LINK_EXPIRED = FAILURE_TYPE.downloadLinkExpired;

async function readExportLink(store: Store, job: JobRef): Promise<ExportLink> {
  const link = await readJsonIfPresent<ExportLink>(store, exportLinkKey(job));
  if (link === undefined) throw linkExpired('no download link recorded yet');
  return link;
}

function linkExpired(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: DOWNLOAD_LINK_EXPIRED, nonRetryable: true });
}

/**
 * Streams the export's signed download (the link the last status call recorded) into `parts/part-00000`, checking every line as it passes and never holding
 * the file in memory. A cut-off or corrupt download aborts the upload (nothing is published) and fails the attempt,
 * so Temporal retries it from the start with a fresh link.
 */
export async function downloadIntentExport(
  client: SignalClient,
  store: Store,
  request: { job: JobRef; exportId: string },
): Promise<ManifestPart> {
  const { job } = request;
  const key = partKey(job, 0);
  const stateKey = exportStateKey(job);
  const record = (await readExportRecord(store, job)) ?? { credits: 0 };
  if (record.part && (await store.exists(record.part.key))) return record.part;

  let download: Awaited<ReturnType<SignalClient['downloadIntentExport']>>;
  const link = await readExportLink(store, job);
  try {
    download = await client.downloadIntentExport(link.download_url, { retry: false });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'gone')
      throw linkExpired(`the download link expired: ${(error as Error).message}`);
    throw error;
  }
  const hash = createHash('sha256');
  const plain = job.compression === 'none';
  // Stored as downloaded: the checker hashes as it scans. Compressed: the gzip output is hashed and counted.
  const checker = new JsonlLineChecker(plain ? { hash } : {});
  let compressed = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      compressed += chunk.length;
      callback(null, chunk);
    },
  });
  const context = Context.current();
  const writer = store.openWrite(key, {
    contentType: partContentType(job.compression),
  });
  try {
    const signal = context.cancellationSignal;
    if (plain) await pipeline(download.body, checker, writer.stream, { signal });
    else await pipeline(download.body, checker, createGzip(), measure, writer.stream, { signal });
    if (download.contentLength !== undefined && checker.bytes !== download.contentLength) {
      throw new Error(`download ended after ${checker.bytes} of ${download.contentLength} bytes`);
    }
    await writer.done();
  } catch (error) {
    await writer.abort(error).catch(() => undefined);
    throw error;
  }
  const stored = plain ? checker.bytes : compressed;
  const part: ManifestPart = { key, lines: checker.lines, bytes: stored, sha256: hash.digest('hex') };
  await store.writeText(stateKey, JSON.stringify({ ...record, part } satisfies ExportRecord));
  return part;
}
