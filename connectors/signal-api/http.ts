/**
 * Transport: one keep-alive undici `Agent` per client, a per-attempt timeout, retries with exponential backoff and
 * full jitter that honour `Retry-After`, and the mapping of every failure onto the typed errors of `errors.ts`.
 *
 * Retry policy (unless `retry: false`):
 * - retried: 429 (waiting `Retry-After` when sent), 5xx (waiting `Retry-After` when a 503 sends one, else backoff),
 *   network failures (timeouts, refused or reset connections) and 2xx bodies that are cut off or not JSON;
 * - calls that create something (`createIntentExport`, `createWebhook`) are retried only when the service provably
 *   did not act on them: a 429, or a connection that was never established. Any other failure is thrown so that
 *   the caller decides (a second export would be charged again);
 * - never retried: 400/401/402/403/404/410/422 and responses of an unexpected shape.
 * The API key is sent only to `baseUrl`'s origin, never to a download host, and never appears in errors.
 */

import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import {
  DestinationBlockedError,
  errorClassForStatus,
  NetworkError,
  RateLimitedError,
  retryAfterMsOf,
  type SignalApiError,
  SignalApiError as SignalApiErrorClass,
  UnexpectedResponseError,
  ValidationError,
} from '../errors.ts';
import { parseRetryAfter } from '../retry-after.ts';
import { createSafeDispatcher } from '../webhooks/safe-dispatcher.ts';
import { MAX_ANSWER_BYTES, MAX_RETRY_AFTER_MS } from './limits.ts';
import { ErrorBodySchema } from './schemas.ts';
import type {
  CallOptions,
  IntentExportDownload,
  RequestEvent,
  ResponseEvent,
  ResponseMeta,
  RetryEvent,
  RetryOptions,
  SignalClientOptions,
} from './types.ts';
import { USER_AGENT } from './version.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;

/** Options of a client whose requests share a budget with other processes (see workers/rate-limiter-permits.ts). */
export interface RequestPacing {
  /**
   * Awaited before each attempt of an API call (downloads are not API calls); resolves when the call may be sent.
   * The attempt's timeout starts after it. It may resolve to a check of whether the call may still leave: after a
   * `beforeSend` that took long (a marker written to a slow store), a call past its time paces again.
   */
  beforeRequest?: (signal?: AbortSignal) => Promise<SendCheck | undefined>;
  /**
   * Awaited before a large answer is parsed, which holds the event loop: a pacing process lets a call that is about
   * due leave first, since its timer could not fire meanwhile.
   */
  beforeParse?: () => Promise<void>;
}

/** Whether a paced call may still leave now (false: it is too late for its turn, and waits for another). */
export type SendCheck = () => boolean;

/** Answers at least this long are parsed after `beforeParse` (shorter ones take too little time to matter). */
const BUSY_PARSE_BYTES = 64 * 1024;
export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: MAX_RETRY_AFTER_MS,
};

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  /** Path under the base URL, e.g. `/v1/companies/enrich`. */
  path: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
  /** False for calls that create something: retried only on 429 or when the connection was never made. */
  idempotent: boolean;
  call?: CallOptions | undefined;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  meta: ResponseMeta;
}

type Headers = Dispatcher.ResponseData['headers'];

type DownloadCall = CallOptions & { offset?: number | undefined };

interface OpenDownload {
  res: Dispatcher.ResponseData;
  status: number;
  /** Absolute position of the first byte of this body. */
  start: number;
  /** Whole-file size, when known. */
  total: number | undefined;
  contentLength: number | undefined;
  contentType: string | undefined;
  ctx: FailureContext;
  abort: (reason?: unknown) => void;
  release: () => void;
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) return v[0];
  return v ?? undefined;
}

/** `x-credits-charged` when the answer carried a usable one (a count: not negative); undefined otherwise. */
function chargedOf(headers: Headers): number | undefined {
  const raw = header(headers, 'x-credits-charged');
  const n = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The response headers that every result carries. An `x-credits-charged` that is there but is not a count (negative,
 * not a number) makes the answer unusable: what it cost would be added to the manifest wrong. Its absence is 0.
 */
export function metaOf(headers: Headers, ctx?: ErrorContext & { status?: number }): ResponseMeta {
  const raw = header(headers, 'x-credits-charged');
  const charged = chargedOf(headers);
  if (raw !== undefined && charged === undefined) {
    throw new UnexpectedResponseError({
      status: ctx?.status ?? 0,
      code: 'unexpected_response',
      field: 'x-credits-charged',
      message: (ctx?.redact ?? String)(
        `${ctx ? `${ctx.method} ${ctx.path}: ` : ''}x-credits-charged: ${JSON.stringify(raw.slice(0, 40))} ` +
          'is not a number of credits (a count from 0 up)',
      ),
      requestId: header(headers, 'x-request-id'),
      method: ctx?.method,
      path: ctx?.path,
    });
  }
  const meta: ResponseMeta = { credits: charged ?? 0 };
  const requestId = header(headers, 'x-request-id');
  if (requestId) meta.requestId = requestId;
  const remainingRaw = header(headers, 'x-credits-remaining');
  const remaining = remainingRaw === undefined ? Number.NaN : Number(remainingRaw);
  if (Number.isFinite(remaining)) meta.creditsRemaining = remaining;
  return meta;
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  410: 'gone',
  422: 'validation_error',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
};

function collapse(text: string, max = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function describeNonJson(text: string, contentType: string | undefined): string {
  if (text.trim() === '') return 'empty response body';
  if (/html/i.test(contentType ?? '') || /^\s*<(!doctype|html|head|body)/i.test(text)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
    const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(text)?.[1];
    const label = collapse((title ?? h1 ?? text.replace(/<[^>]*>/g, ' ')).replace(/<[^>]*>/g, ' '), 120);
    return label ? `HTML error page "${label}"` : 'HTML error page';
  }
  return `"${collapse(text)}"`;
}

export interface ErrorContext {
  method: string;
  path: string;
  redact: (s: string) => string;
}

/** The typed error for a non-2xx response, whatever its body (JSON error, HTML page, plain text, nothing). */
export function errorFromResponse(status: number, headers: Headers, text: string, ctx: ErrorContext): SignalApiError {
  let json: unknown;
  try {
    json = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  let code: string | undefined;
  let message: string | undefined;
  let field: string | undefined;
  let bodyRequestId: string | undefined;
  const parsed = json === undefined ? undefined : ErrorBodySchema.safeParse(json);
  if (parsed?.success) {
    const b = parsed.data;
    if (typeof b.error === 'string') message = b.error;
    else if (b.error) {
      code = b.error.code === null || b.error.code === undefined ? undefined : String(b.error.code);
      message = b.error.message ?? undefined;
      field = b.error.field ?? undefined;
      bodyRequestId = b.error.request_id ?? undefined;
    }
    code ??= b.code === null || b.code === undefined ? undefined : String(b.code);
    message ??= b.message ?? (typeof b.detail === 'string' ? b.detail : undefined);
    field ??= b.field ?? undefined;
    bodyRequestId ??= b.request_id ?? undefined;
    const first = b.errors?.[0] as { message?: unknown; field?: unknown; msg?: unknown } | undefined;
    if (first && typeof first === 'object') {
      message ??=
        typeof first.message === 'string' ? first.message : typeof first.msg === 'string' ? first.msg : undefined;
      field ??= typeof first.field === 'string' ? first.field : undefined;
    }
    if (message === undefined && b.detail !== undefined) message = collapse(JSON.stringify(b.detail));
  }
  message ??= json === undefined ? describeNonJson(text, header(headers, 'content-type')) : collapse(text);
  const statusText = STATUS_CODES[status] ?? 'HTTP error';
  const Cls = errorClassForStatus(status);
  const retryAfterMs = status === 429 || status >= 500 ? parseRetryAfter(header(headers, 'retry-after')) : undefined;
  return new Cls({
    status,
    code: code ?? DEFAULT_CODES[status] ?? `http_${status}`,
    message: ctx.redact(`${ctx.method} ${ctx.path} failed with ${status} ${statusText}: ${message}`),
    requestId: header(headers, 'x-request-id') ?? bodyRequestId,
    field,
    method: ctx.method,
    path: ctx.path,
    retryAfterMs,
    creditsCharged: chargedOf(headers),
  });
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection_refused',
  UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
  ENOTFOUND: 'dns_failure',
  EAI_AGAIN: 'dns_failure',
  ETIMEDOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNRESET: 'connection_reset',
  ECONNABORTED: 'connection_reset',
  EPIPE: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  UND_ERR_CLOSED: 'connection_reset',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'truncated_body',
};

interface FailureContext extends ErrorContext {
  timedOut: boolean;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  status?: number;
  requestId?: string | undefined;
}

/** One attempt's abort wiring: the timeout (which marks `ctx.timedOut`) and the caller's signal both abort `ac`. */
interface ArmedAttempt {
  ctx: FailureContext;
  ac: AbortController;
  timer: ReturnType<typeof setTimeout>;
  /** Stops listening to the caller's signal. */
  release: () => void;
}

function armAttempt(base: ErrorContext, timeoutMs: number, signal: AbortSignal | undefined): ArmedAttempt {
  const ctx: FailureContext = { ...base, timedOut: false, timeoutMs, signal };
  const ac = new AbortController();
  const timer = setTimeout(() => {
    ctx.timedOut = true;
    ac.abort(new Error('timeout'));
  }, timeoutMs);
  const onAbort = () => ac.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  return { ctx, ac, timer, release: () => signal?.removeEventListener('abort', onAbort) };
}

/** Maps a thrown transport error: the caller's abort reason as is, everything network-like to `NetworkError`. */
function networkFailure(err: unknown, ctx: FailureContext): unknown {
  if (err instanceof SignalApiErrorClass) return err;
  if (ctx.signal?.aborted) return ctx.signal.reason;
  const base = { status: ctx.status ?? 0, requestId: ctx.requestId, method: ctx.method, path: ctx.path, cause: err };
  if (ctx.timedOut) {
    return new NetworkError({
      ...base,
      code: 'timeout',
      message: `${ctx.method} ${ctx.path}: no complete answer within ${ctx.timeoutMs} ms`,
    });
  }
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  const rawCode = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  if (rawCode === undefined || rawCode === 'UND_ERR_INVALID_ARG' || !/^(E[A-Z]+|UND_ERR_)/.test(rawCode)) return err;
  const code = NETWORK_CODES[rawCode] ?? 'network_error';
  const what = typeof e?.message === 'string' && e.message ? e.message : rawCode;
  return new NetworkError({
    ...base,
    code,
    message: ctx.redact(`${ctx.method} ${ctx.path}: ${code.replace(/_/g, ' ')} (${rawCode}: ${what})`),
  });
}

/**
 * The body as text, reading at most `maxBytes` (a declared Content-Length over it is refused before reading): a
 * NetworkError `answer_too_large` naming the cap and the path otherwise, and the connection is dropped.
 */
async function readCapped(res: Dispatcher.ResponseData, maxBytes: number, ctx: FailureContext): Promise<string> {
  const tooLarge = () => {
    res.body.destroy();
    return new NetworkError({
      status: ctx.status ?? 0,
      code: 'answer_too_large',
      message: `${ctx.method} ${ctx.path}: the answer is larger than ${maxBytes} bytes (the client's maxAnswerBytes cap); not read further`,
      requestId: ctx.requestId,
      method: ctx.method,
      path: ctx.path,
    });
  };
  const declared = header(res.headers, 'content-length');
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function fullRetry(retry: false | Partial<RetryOptions> | undefined, fallback: false | Required<RetryOptions>) {
  if (retry === false) return false;
  if (retry === undefined) return fallback;
  return { ...DEFAULT_RETRY, ...(fallback || {}), ...retry };
}

/** Full jitter: a random delay in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))]. */
export function backoffDelay(attempt: number, policy: RetryOptions, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * cap);
}

function shouldRetry(err: unknown, idempotent: boolean): err is SignalApiError {
  if (!(err instanceof SignalApiErrorClass) || !err.retryable) return false;
  if (idempotent) return true;
  return err instanceof RateLimitedError || (err instanceof NetworkError && err.notSent);
}

export class Transport {
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #authHeaders: Record<string, string>;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxAnswerBytes: number;
  readonly #retry: false | Required<RetryOptions>;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #onRequest: ((event: RequestEvent) => void) | undefined;
  readonly #onResponse: ((event: ResponseEvent) => void) | undefined;
  readonly #userAgent: string;
  readonly #beforeRequest: RequestPacing['beforeRequest'];
  readonly #beforeParse: RequestPacing['beforeParse'];
  /** For download links on another host than the API: the SSRF guard's dispatcher, made on first use. */
  #foreignDownloads: Agent | undefined;
  #closed = false;

  constructor(options: SignalClientOptions & RequestPacing) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`SignalClient: baseUrl is not a URL: ${String(options.baseUrl)}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`SignalClient: baseUrl must be http(s): ${options.baseUrl}`);
    }
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('SignalClient: apiKey is required');
    }
    this.#origin = base.origin;
    this.#prefix = base.pathname.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#authHeaders =
      options.auth === 'bearer' ? { authorization: `Bearer ${options.apiKey}` } : { 'x-api-key': options.apiKey };
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.#retry = fullRetry(options.retry, DEFAULT_RETRY);
    this.#onRetry = options.onRetry;
    this.#onRequest = options.onRequest;
    this.#onResponse = options.onResponse;
    this.#userAgent = options.userAgent ?? USER_AGENT;
    this.#beforeRequest = options.beforeRequest;
    this.#beforeParse = options.beforeParse;
    if (options.dispatcher) {
      this.#dispatcher = options.dispatcher;
      this.#ownsDispatcher = false;
    } else {
      this.#dispatcher = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 32 });
      this.#ownsDispatcher = true;
    }
  }

  get origin(): string {
    return this.#origin;
  }

  /** How long one attempt of a call may take, from leaving to its whole answer. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Removes the API key from any text that could reach a log. */
  readonly redact = (s: string): string => (this.#apiKey.length >= 4 ? s.split(this.#apiKey).join('[redacted]') : s);

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDispatcher) await this.#dispatcher.close();
    await this.#foreignDownloads?.close();
  }

  /**
   * The dispatcher for a download link. On the API's own origin, the API's. When the API itself is on this machine
   * (a local sandbox, a proxy in front of it), a link on this machine too. Anywhere else the link must be https,
   * and it goes through the SSRF guard (connectors/webhooks/safe-dispatcher.ts), which refuses loopback, private,
   * link-local and metadata addresses on the address it connects to: a link in an answer must not make the worker
   * fetch from inside its network.
   */
  #downloadDispatcher(url: URL): Dispatcher {
    if (url.origin === this.#origin) return this.#dispatcher;
    if (isLoopbackHost(new URL(this.#origin).hostname) && isLoopbackHost(url.hostname)) return this.#dispatcher;
    if (url.protocol !== 'https:') {
      throw new ValidationError({
        status: 0,
        code: 'validation_error',
        field: 'download_url',
        message: `download_url: a link on another host than the API must be https, got ${url.protocol}//${url.host}`,
        method: 'GET',
        path: url.pathname,
      });
    }
    this.#foreignDownloads ??= createSafeDispatcher({
      agentOptions: { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 8 },
    });
    return this.#foreignDownloads;
  }

  /** A JSON API call, retried per policy. */
  async json(req: ApiRequest): Promise<ApiResponse> {
    const path = this.#prefix + req.path + queryString(req.query);
    const pace = this.#beforeRequest;
    return this.#withRetry(req.method, req.path, req.idempotent, req.call, async (timeoutMs, attempt) => {
      for (;;) {
        const onTime = pace ? await pace(req.call?.signal) : undefined;
        req.call?.signal?.throwIfAborted();
        await req.call?.beforeSend?.();
        // A call held past its turn (by beforeSend) could meet later turns in one of the service's windows.
        if (!onTime || onTime()) break;
      }
      return this.#observe(req.method, req.path, attempt, () => this.#jsonAttempt(req, path, timeoutMs), answered);
    });
  }

  /** GET of a signed download URL, without the API key; the initial request is retried per policy. */
  async download(url: URL, call: DownloadCall): Promise<IntentExportDownload> {
    const timeoutMs = call.timeoutMs ?? this.#timeoutMs;
    const first = await this.#withRetry('GET', url.pathname, true, call, (t, attempt) =>
      this.#observe('GET', url.pathname, attempt, () => this.#openDownload(url, call.offset ?? 0, call, t), opened),
    );
    const live = { current: first };
    const body = Readable.from(this.#downloadChunks(url, live, call, timeoutMs), { objectMode: false });
    // A consumer that stops reading early releases the connection at once, not at the next chunk.
    body.once('close', () => {
      if (!body.readableEnded) live.current.abort(new Error('download stream closed by the consumer'));
    });
    const result: IntentExportDownload = {
      body,
      stream: () => Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>,
      offset: first.start,
      status: first.status,
      credits: 0,
    };
    if (first.contentLength !== undefined) result.contentLength = first.contentLength;
    if (first.total !== undefined) result.totalLength = first.total;
    if (first.contentType) result.contentType = first.contentType;
    if (first.ctx.requestId) result.requestId = first.ctx.requestId;
    return result;
  }

  async #withRetry<T>(
    method: string,
    path: string,
    idempotent: boolean,
    call: CallOptions | undefined,
    attempt: (timeoutMs: number, n: number) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) throw new TypeError('SignalClient: closed');
    const policy = fullRetry(call?.retry, this.#retry);
    const timeoutMs = call?.timeoutMs ?? this.#timeoutMs;
    const maxAttempts = policy ? Math.max(1, policy.maxAttempts) : 1;
    for (let n = 1; ; n++) {
      try {
        return await attempt(timeoutMs, n);
      } catch (err) {
        if (!policy || n >= maxAttempts || !shouldRetry(err, idempotent)) throw err;
        const asked = retryAfterMsOf(err);
        if (asked !== undefined && asked > policy.maxRetryAfterMs) throw err;
        const delayMs = asked ?? backoffDelay(n, policy);
        this.#onRetry?.({ attempt: n, delayMs, error: err, method, path });
        try {
          await sleep(delayMs, undefined, call?.signal ? { signal: call.signal } : undefined);
        } catch (sleepErr) {
          throw call?.signal?.aborted ? call.signal.reason : sleepErr;
        }
      }
    }
  }

  /** Runs one attempt between the `onRequest` and `onResponse` hooks; a hook that throws is ignored. */
  async #observe<T>(
    method: string,
    path: string,
    attempt: number,
    send: () => Promise<T>,
    outcome: (value: T) => Pick<ResponseEvent, 'status' | 'requestId' | 'credits'>,
  ): Promise<T> {
    if (!this.#onRequest && !this.#onResponse) return send();
    const request = { method, path, attempt };
    callHook(this.#onRequest, request);
    const started = performance.now();
    try {
      const value = await send();
      callHook(this.#onResponse, { ...request, durationMs: performance.now() - started, ...outcome(value) });
      return value;
    } catch (error) {
      const known = error instanceof SignalApiErrorClass ? error : undefined;
      callHook(this.#onResponse, {
        ...request,
        durationMs: performance.now() - started,
        status: known?.status ?? 0,
        ...(known?.requestId ? { requestId: known.requestId } : {}),
        credits: 0,
        ...(error instanceof Error ? { error } : {}),
      });
      throw error;
    }
  }

  async #jsonAttempt(req: ApiRequest, path: string, timeoutMs: number): Promise<ApiResponse> {
    const signal = req.call?.signal;
    if (signal?.aborted) throw signal.reason;
    const bodyText = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#userAgent,
      ...this.#authHeaders,
    };
    if (bodyText !== undefined) headers['content-type'] = 'application/json';
    const { ctx, ac, timer, release } = armAttempt(
      { method: req.method, path: req.path, redact: this.redact },
      timeoutMs,
      signal,
    );
    try {
      let res: Dispatcher.ResponseData;
      try {
        req.call?.onSend?.();
        res = await this.#dispatcher.request({
          origin: this.#origin,
          path,
          method: req.method,
          headers,
          body: bodyText ?? null,
          signal: ac.signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (err) {
        throw networkFailure(err, ctx);
      }
      const status = res.statusCode;
      ctx.status = status;
      ctx.requestId = header(res.headers, 'x-request-id');
      let text: string;
      try {
        text = await readCapped(res, this.#maxAnswerBytes, ctx);
      } catch (err) {
        throw networkFailure(err, ctx);
      }
      if (status < 200 || status > 299) throw errorFromResponse(status, res.headers, text, ctx);
      const meta = metaOf(res.headers, { ...ctx, status });
      if (text.trim() === '') {
        if (status === 204 || req.method === 'DELETE') return { status, body: {}, meta };
        throw new NetworkError({
          status,
          code: 'malformed_body',
          message: `${req.method} ${req.path}: ${status} answer with an empty body`,
          requestId: meta.requestId,
          creditsCharged: chargedOf(res.headers),
          method: req.method,
          path: req.path,
        });
      }
      if (this.#beforeParse && text.length >= BUSY_PARSE_BYTES) await this.#beforeParse();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new NetworkError({
          status,
          code: 'malformed_body',
          message: `${req.method} ${req.path}: ${status} answer whose body is not complete JSON (${text.length} bytes)`,
          requestId: meta.requestId,
          creditsCharged: chargedOf(res.headers),
          method: req.method,
          path: req.path,
          cause: err,
        });
      }
      return { status, body, meta };
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  /**
   * Opens the download at byte `pos` (a `Range` request when `pos` > 0). Resolves once the headers are in;
   * `timeoutMs` bounds the wait for them, `bodyTimeout` then bounds each silence between chunks.
   */
  async #openDownload(url: URL, pos: number, call: DownloadCall, timeoutMs: number): Promise<OpenDownload> {
    const signal = call.signal;
    if (signal?.aborted) throw signal.reason;
    // No API key: the signed URL is its own credential, and the download host may be a third party.
    const headers: Record<string, string> = {
      accept: 'application/x-ndjson, application/jsonl, application/json, */*',
      'user-agent': this.#userAgent,
    };
    if (pos > 0) headers['range'] = `bytes=${pos}-`;
    const { ctx, ac, timer, release } = armAttempt(
      { method: 'GET', path: url.pathname, redact: this.redact },
      timeoutMs,
      signal,
    );
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#downloadDispatcher(url).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'GET',
        headers,
        signal: ac.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      release();
      if (err instanceof DestinationBlockedError) {
        throw new ValidationError({
          status: 0,
          code: 'download_blocked',
          field: 'download_url',
          message: `download_url: ${err.message}`,
          method: 'GET',
          path: url.pathname,
          cause: err,
        });
      }
      throw networkFailure(err, ctx);
    } finally {
      clearTimeout(timer);
    }
    const status = res.statusCode;
    ctx.status = status;
    ctx.requestId = header(res.headers, 'x-request-id');
    if (status < 200 || status > 299) {
      let text = '';
      try {
        text = await readCapped(res, this.#maxAnswerBytes, ctx);
      } catch (err) {
        throw networkFailure(err, ctx);
      } finally {
        release();
      }
      throw errorFromResponse(status, res.headers, text, ctx);
    }
    const lengthHeader = header(res.headers, 'content-length');
    const contentLength = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
    let start = 0;
    let total = contentLength;
    if (status === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(res.headers, 'content-range') ?? '');
      start = m ? Number(m[1]) : pos;
      total = m && m[3] !== '*' ? Number(m[3]) : contentLength === undefined ? undefined : start + contentLength;
    }
    return {
      res,
      status,
      start,
      total,
      contentLength,
      contentType: header(res.headers, 'content-type'),
      ctx,
      abort: (reason) => ac.abort(reason),
      release,
    };
  }

  /**
   * The body of a download as one stream. With retries on, a transfer cut short (reset, or fewer bytes than
   * announced) is resumed: a `Range` request from the next byte, or, when the server ignores `Range`, the file
   * again with the bytes already passed on skipped. With retries off, or when the attempts run out, the stream
   * errors with a `NetworkError` (`truncated_body` when the length was known).
   */
  async *#downloadChunks(url: URL, live: { current: OpenDownload }, call: DownloadCall, timeoutMs: number) {
    const policy = fullRetry(call.retry, this.#retry);
    const maxAttempts = policy ? Math.max(1, policy.maxAttempts) : 1;
    const first = live.current;
    let current = first;
    let pos = first.start;
    let skip = 0;
    const total = first.total;
    let attempt = 1;
    try {
      for (;;) {
        try {
          for await (const raw of current.res.body) {
            let chunk = raw as Buffer;
            if (skip > 0) {
              if (chunk.length <= skip) {
                skip -= chunk.length;
                continue;
              }
              chunk = chunk.subarray(skip);
              skip = 0;
            }
            pos += chunk.length;
            yield chunk;
          }
          if (total !== undefined && pos < total) throw new Error('body ended early');
          return;
        } catch (err) {
          let mapped = networkFailure(err, current.ctx);
          if (
            !(mapped instanceof SignalApiErrorClass) &&
            !(err instanceof Error && err.message === 'body ended early')
          ) {
            throw mapped;
          }
          if (total !== undefined && pos < total) {
            mapped = new NetworkError({
              status: current.status,
              code: 'truncated_body',
              message: `GET ${url.pathname}: download cut off after ${pos - first.start} of ${total - first.start} bytes`,
              requestId: current.ctx.requestId,
              method: 'GET',
              path: url.pathname,
              cause: err,
            });
          }
          if (!policy || attempt >= maxAttempts || !(mapped instanceof NetworkError)) throw mapped;
          current.release();
          const delayMs = backoffDelay(attempt, policy);
          this.#onRetry?.({ attempt, delayMs, error: mapped, method: 'GET', path: url.pathname });
          attempt++;
          await sleep(delayMs, undefined, call.signal ? { signal: call.signal } : undefined).catch((e: unknown) => {
            throw call.signal?.aborted ? call.signal.reason : e;
          });
          current = await this.#observe(
            'GET',
            url.pathname,
            attempt,
            () => this.#openDownload(url, pos, call, timeoutMs),
            opened,
          );
          live.current = current;
          if (current.status === 206 && current.start <= pos) skip = pos - current.start;
          else if (current.status === 206) throw mapped;
          else skip = pos;
        }
      }
    } finally {
      current.release();
      if (!current.res.body.destroyed) current.res.body.destroy();
    }
  }
}

function callHook<E>(hook: ((event: E) => void) | undefined, event: E): void {
  try {
    hook?.(event);
  } catch {
    // A metrics or tracing hook must never fail a call that may already have been paid for.
  }
}

const answered = (response: ApiResponse) => ({
  status: response.status,
  ...(response.meta.requestId ? { requestId: response.meta.requestId } : {}),
  credits: response.meta.credits,
});

const opened = (download: OpenDownload) => ({
  status: download.status,
  ...(download.ctx.requestId ? { requestId: download.ctx.requestId } : {}),
  credits: 0,
});

function queryString(query: ApiRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}
