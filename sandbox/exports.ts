/**
 * Buyer-intent export jobs (spec 4.10, 4.11; README "Export jobs"). A job's state is a function of the clock:
 * queued → running → ready (or failed), and expired after `jobTtlMs`. A ready job offers a signed, expiring
 * download link. The JSONL body is generated row by row while it is sent: lines have a fixed width, so the
 * Content-Length is known up front, Range requests are cheap, and memory stays constant for any row count.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RawOutcome } from './call-log.ts';
import type { Catalog } from './data/catalog.ts';
import {
  EXPORT_LINE_WIDTH,
  exportLine,
  type IntentFilter,
  intentItem,
  matchesIntentFilter,
  topicContactCount,
} from './data/intent.ts';
import { ApiError, errorBody } from './errors.ts';
import type { Faults } from './faults.ts';
import { hash2, hashString, hex8 } from './random.ts';
import { iso } from './time.ts';

export interface ExportTiming {
  queuedMs: number;
  runningMs: number;
  linkTtlMs: number;
  jobTtlMs: number;
}

export const DEFAULT_EXPORT_TIMING: ExportTiming = {
  queuedMs: 1_000,
  runningMs: 2_000,
  linkTtlMs: 15 * 60_000,
  jobTtlMs: 24 * 3_600_000,
};

export type ExportStatus = 'queued' | 'running' | 'ready' | 'failed' | 'expired';

export interface ExportJob {
  id: string;
  account: string;
  createdAt: number;
  topicIds: string[];
  /** Matching (topic, index) pairs in output order, packed as topic * 512 + index. */
  pairs: Uint32Array;
  /** Contacts per topic number, for the intent scores. */
  sizes: Map<number, number>;
  rowCount: number;
  willFail: boolean;
}

export interface ExportView {
  export_id: string;
  status: ExportStatus;
  created_at: string;
  updated_at: string;
  topic_ids: string[];
  row_count?: number;
  download_url?: string;
  expires_at?: string;
  error?: { code: string; message: string };
}

/** What an export will hold, decided at submit. */
export type ExportPlan = Omit<ExportJob, 'id' | 'account' | 'createdAt' | 'topicIds' | 'willFail'>;

export const EXPORT_JOB_CAPACITY = 1_000;
/** Bytes generated per write while streaming (about 96 KiB). */
const CHUNK_LINES = 128;

export interface ExportServiceOptions {
  seed: number;
  catalog: () => Catalog;
  clock: () => number;
  faults: Faults;
  timing: ExportTiming;
  exportRows: number | undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits until `res` can take more data, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * `bytes=a-b`, `bytes=a-` or `bytes=-n` against a body of `total` bytes: the byte span (end exclusive),
 * 'unsatisfiable', or undefined when there is no usable single range (the whole body is sent).
 */
export function parseRange(
  header: string | undefined,
  total: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || total === 0) return 'unsatisfiable';
    return { start: Math.max(0, total - n), end: total };
  }
  const a = Number(m[1]);
  const b = m[2] === '' ? total - 1 : Number(m[2]);
  if (a >= total) return 'unsatisfiable';
  if (b < a) return undefined;
  return { start: a, end: Math.min(total, b + 1) };
}

export class ExportService {
  private readonly jobs = new Map<string, ExportJob>();
  private readonly opts: ExportServiceOptions;
  private readonly secret: Buffer;
  private counter = 0;
  /** Aborted by stop(): ends throttled streams. */
  readonly abort = new AbortController();

  constructor(opts: ExportServiceOptions) {
    this.opts = opts;
    this.secret = createHash('sha256').update(`signal-kit-sandbox-exports:${opts.seed}`).digest();
  }

  /** Matching pairs for a request (at most `limit`), computed once at submit (and by the oracle's quote). */
  plan(topics: number[], filter: IntentFilter, limit: number | undefined): ExportPlan {
    const { seed } = this.opts;
    const catalog = this.opts.catalog();
    const sizes = new Map<number, number>();
    const out: number[] = [];
    const cap = limit ?? Number.POSITIVE_INFINITY;
    for (const n of topics) {
      const size = topicContactCount(seed, n);
      sizes.set(n, size);
      for (let j = 0; j < size && out.length < cap; j++) {
        if (matchesIntentFilter(intentItem(seed, catalog, n, j, size), filter)) out.push(n * 512 + j);
      }
    }
    let pairs = Uint32Array.from(out);
    let rowCount = pairs.length;
    if (this.opts.exportRows !== undefined) {
      rowCount = this.opts.exportRows;
      if (pairs.length === 0 && rowCount > 0) {
        const n = topics[0]!;
        pairs = Uint32Array.from({ length: sizes.get(n)! }, (_, j) => n * 512 + j);
      }
    }
    return { pairs, sizes, rowCount };
  }

  submit(account: string, topics: number[], planned: ExportPlan, now: number): ExportJob {
    const n = ++this.counter;
    const id = `exp_${hex8(hash2(hashString('export', this.opts.seed), n))}${hex8(hash2(n, now >>> 0))}`;
    const job: ExportJob = {
      id,
      account,
      createdAt: now,
      topicIds: topics.map((t) => `b2b_${t}`),
      willFail: this.opts.faults.exportFailure,
      ...planned,
    };
    if (this.jobs.size >= EXPORT_JOB_CAPACITY) {
      const oldest = this.jobs.keys().next();
      if (!oldest.done) this.jobs.delete(oldest.value);
    }
    this.jobs.set(id, job);
    return job;
  }

  get(id: string, account?: string): ExportJob | undefined {
    const job = this.jobs.get(id);
    return job && (account === undefined || job.account === account) ? job : undefined;
  }

  state(job: ExportJob, now: number): { status: ExportStatus; since: number } {
    const { queuedMs, runningMs, jobTtlMs } = this.opts.timing;
    const age = now - job.createdAt;
    if (age >= jobTtlMs) return { status: 'expired', since: job.createdAt + jobTtlMs };
    if (age < queuedMs) return { status: 'queued', since: job.createdAt };
    if (age < queuedMs + runningMs) return { status: 'running', since: job.createdAt + queuedMs };
    return { status: job.willFail ? 'failed' : 'ready', since: job.createdAt + queuedMs + runningMs };
  }

  sign(id: string, expiresS: number): string {
    return createHmac('sha256', this.secret).update(`${id}:${expiresS}`).digest('hex');
  }

  view(job: ExportJob, now: number, baseUrl: string): ExportView {
    const { status, since } = this.state(job, now);
    const out: ExportView = {
      export_id: job.id,
      status,
      created_at: iso(job.createdAt),
      updated_at: iso(since),
      topic_ids: job.topicIds,
    };
    if (status === 'ready') {
      const jobEnd = job.createdAt + this.opts.timing.jobTtlMs;
      const expiresS = Math.floor(Math.min(now + this.opts.timing.linkTtlMs, jobEnd) / 1000);
      out.row_count = job.rowCount;
      out.download_url = `${baseUrl}/downloads/exports/${job.id}.jsonl?expires=${expiresS}&sig=${this.sign(job.id, expiresS)}`;
      out.expires_at = iso(expiresS * 1000);
    }
    if (status === 'failed') {
      out.error = { code: 'export_failed', message: 'the export job failed (sandbox fault exportFailure)' };
    }
    return out;
  }

  /** Row `r` of a job as its fixed-width line. */
  line(job: ExportJob, r: number): string {
    const packed = job.pairs[r % job.pairs.length]!;
    const n = Math.floor(packed / 512);
    const j = packed % 512;
    return exportLine(intentItem(this.opts.seed, this.opts.catalog(), n, j, job.sizes.get(n)!));
  }

  /** `GET /downloads/exports/<id>.jsonl?expires=&sig=`: checks the link, then streams the body. */
  async download(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    file: string,
    query: URLSearchParams,
  ): Promise<RawOutcome | undefined> {
    const fail = (err: ApiError): undefined => {
      const body = JSON.stringify(errorBody(err, requestId));
      res.writeHead(err.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-request-id': requestId,
        'x-credits-charged': '0',
        ...err.headers,
      });
      res.end(body);
      return undefined;
    };
    const m = /^(exp_[0-9a-f]+)\.jsonl$/.exec(file);
    const expires = query.get('expires') ?? '';
    const sig = query.get('sig') ?? '';
    if (!m) return fail(new ApiError(404, 'not_found', 'no such export file'));
    const id = m[1]!;
    if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) {
      return fail(new ApiError(403, 'forbidden', 'the download link is not signed'));
    }
    const expected = Buffer.from(this.sign(id, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) {
      return fail(new ApiError(403, 'forbidden', 'the download link signature is not valid'));
    }
    const now = this.opts.clock();
    if (now >= Number(expires) * 1000) return fail(new ApiError(410, 'gone', 'the download link has expired'));
    const job = this.jobs.get(id);
    if (!job) return fail(new ApiError(404, 'not_found', `no export ${id}`));
    const { status } = this.state(job, now);
    if (status === 'expired') return fail(new ApiError(410, 'gone', `export ${id} has expired`));
    if (status !== 'ready') return fail(new ApiError(404, 'not_found', `export ${id} is ${status}`));

    const total = job.rowCount * EXPORT_LINE_WIDTH;
    let start = 0;
    let end = total; // exclusive
    let partial = false;
    const range = parseRange(req.headers.range, total);
    if (range === 'unsatisfiable') {
      return fail(
        new ApiError(416, 'range_not_satisfiable', `range ${req.headers.range} is outside 0-${total - 1}`, undefined, {
          'content-range': `bytes */${total}`,
        }),
      );
    }
    if (range) {
      start = range.start;
      end = range.end;
      partial = true;
    }
    const headers: Record<string, string | number> = {
      'content-type': 'application/x-ndjson',
      'content-length': end - start,
      'accept-ranges': 'bytes',
      'content-disposition': `attachment; filename="${id}.jsonl"`,
      'x-request-id': requestId,
      'x-credits-charged': '0',
      'x-row-count': job.rowCount,
    };
    if (partial) headers['content-range'] = `bytes ${start}-${end - 1}/${total}`;
    res.writeHead(partial ? 206 : 200, headers);
    const asked = { export_id: id, range: req.headers.range ?? null };
    if (req.method === 'HEAD') {
      res.end();
      return { asked, returned: { bytes: 0 } };
    }
    const { cutAt, bytesPerSec } = this.opts.faults.decideDownload();
    const cutBytes = cutAt === undefined ? undefined : start + Math.floor((end - start) * cutAt);
    await this.stream(job, res, start, end, cutBytes, bytesPerSec);
    const returned = { bytes: (cutBytes ?? end) - start };
    return cutBytes === undefined ? { asked, returned } : { asked, returned, fault: 'truncated' };
  }

  private async stream(
    job: ExportJob,
    res: ServerResponse,
    start: number,
    end: number,
    cutBytes: number | undefined,
    bytesPerSec: number | undefined,
  ): Promise<void> {
    const W = EXPORT_LINE_WIDTH;
    const signal = this.abort.signal;
    const linesPerChunk = bytesPerSec
      ? Math.max(1, Math.min(CHUNK_LINES, Math.floor(bytesPerSec / 10 / W)))
      : CHUNK_LINES;
    let pos = start;
    while (pos < end) {
      if (res.destroyed || signal.aborted) return;
      const firstRow = Math.floor(pos / W);
      const lastRow = Math.min(Math.ceil(end / W), firstRow + linesPerChunk);
      let text = '';
      for (let r = firstRow; r < lastRow; r++) text += this.line(job, r);
      let chunk = Buffer.from(text, 'latin1');
      const offset = pos - firstRow * W;
      const stop = Math.min(end, lastRow * W) - firstRow * W;
      if (offset > 0 || stop < chunk.length) chunk = chunk.subarray(offset, stop);
      if (cutBytes !== undefined && pos + chunk.length >= cutBytes) {
        const part = chunk.subarray(0, cutBytes - pos);
        const socket = res.socket;
        res.write(part, () => socket?.destroy());
        setTimeout(() => socket?.destroy(), 50).unref();
        return;
      }
      const ok = res.write(chunk);
      pos += chunk.length;
      if (bytesPerSec) await sleep((chunk.length / bytesPerSec) * 1000, signal);
      // The buffer may have drained during the throttle's sleep: then no 'drain' event is coming.
      if (!ok && res.writableNeedDrain && !res.destroyed) await drained(res);
    }
    res.end();
  }
}
