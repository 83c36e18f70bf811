import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { toActivityFailure } from './failures.ts';
import { exportLinkKey, exportStateKey, partKey } from './layout.ts';
import { JsonlLineChecker } from './line-check.ts';
import type { JobRef, ManifestPart } from './types.ts';

/** The export request (spec 4.10 field names). */
export interface IntentExportRequest {
  topic_ids: string[];
  email_validated?: boolean;
  limit?: number;
  seniority?: string[];
  department?: string[];
}

export interface SubmittedExport {
  exportId: string;
  credits: number;
}

export interface ExportState {
  status: string;
  reason?: string;
  rowCount?: number;
}

interface ExportRecord {
  export_id: string;
  credits: number;
  part?: ManifestPart;
}

/**
 * Submits the export once per job: the export id is recorded under `work/export.json`, so a retried or re-run
 * submit reuses it instead of paying the per-topic fee again.
 */
export async function submitIntentExport(
  client: SignalClient,
  store: Store,
  request: { job: JobRef; request: IntentExportRequest },
): Promise<SubmittedExport> {
  const key = exportStateKey(request.job);
  if (await store.exists(key)) {
    const record = JSON.parse(await store.readText(key)) as ExportRecord;
    return { exportId: record.export_id, credits: record.credits };
  }
  try {
    const created = await client.createIntentExport(request.request, { retry: false });
    const record: ExportRecord = { export_id: created.export_id, credits: created.credits };
    await store.writeText(key, JSON.stringify(record));
    return { exportId: created.export_id, credits: created.credits };
  } catch (error) {
    throw toActivityFailure(error);
  }
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
  try {
    const state = await client.getIntentExport(request.exportId, { retry: false });
    if (store && request.job && state.status === 'ready' && state.download_url) {
      const link: ExportLink = { download_url: state.download_url, expires_at: state.expires_at ?? null };
      await store.writeText(exportLinkKey(request.job), JSON.stringify(link));
    }
    return { status: state.status, reason: state.error?.message, rowCount: state.row_count };
  } catch (error) {
    throw toActivityFailure(error);
  }
}

interface ExportLink {
  download_url: string;
  expires_at: string | null;
}

/** The failure type that asks the workflow for a fresh link (one more status call) before downloading again. */
export const DOWNLOAD_LINK_EXPIRED = 'DownloadLinkExpired';

async function readExportLink(store: Store, job: JobRef): Promise<ExportLink> {
  const key = exportLinkKey(job);
  if (!(await store.exists(key))) throw linkExpired('no download link recorded yet');
  return JSON.parse(await store.readText(key)) as ExportLink;
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
  const record = JSON.parse(await store.readText(stateKey)) as ExportRecord;
  if (record.part && (await store.exists(record.part.key))) return record.part;

  let download: Awaited<ReturnType<SignalClient['downloadIntentExport']>>;
  const link = await readExportLink(store, job);
  try {
    download = await client.downloadIntentExport(link.download_url, { retry: false });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'gone')
      throw linkExpired(`the download link expired: ${(error as Error).message}`);
    throw toActivityFailure(error);
  }
  const checker = new JsonlLineChecker();
  const hash = createHash('sha256');
  let stored = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      stored += chunk.length;
      callback(null, chunk);
    },
  });
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat({ bytes: checker.bytes, lines: checker.lines }), 5000);
  const writer = store.openWrite(key, {
    contentType: job.compression === 'none' ? 'application/x-ndjson' : 'application/gzip',
  });
  try {
    const signal = context.cancellationSignal;
    if (job.compression === 'none') await pipeline(download.body, checker, measure, writer.stream, { signal });
    else await pipeline(download.body, checker, createGzip(), measure, writer.stream, { signal });
    if (download.contentLength !== undefined && checker.bytes !== download.contentLength) {
      throw new Error(`download ended after ${checker.bytes} of ${download.contentLength} bytes`);
    }
    await writer.done();
  } catch (error) {
    await writer.abort(error).catch(() => undefined);
    throw toActivityFailure(error);
  } finally {
    clearInterval(heartbeat);
  }
  const part: ManifestPart = { key, lines: checker.lines, bytes: stored, sha256: hash.digest('hex') };
  await store.writeText(stateKey, JSON.stringify({ ...record, part } satisfies ExportRecord));
  return part;
}
