/**
 * The webhook intake: an HTTP server that accepts the service's `signal.created` events (spec section 6), checks
 * that they are authentic and well formed, and hands each one to an injected `enqueue` (in production: start the
 * durable workflow `signal-<signal.id>`). It answers 202 only after `enqueue` resolved, so a 2xx means the event is
 * durably accepted; a failing `enqueue` is a 503 with `Retry-After`, and the sender retries.
 *
 * Rejections (nothing is enqueued), each a JSON body `{ "error": { "code", "message", "field"? } }`:
 *   401 missing/invalid signature or token, timestamp outside the tolerance
 *   400 a request line, target or header Node's parser or URL parsing cannot take (answered, the process stays up);
 *       408 headers or body not complete within the timeouts; 431 headers too large
 *   413 body over `maxBodyBytes` (checked on Content-Length before reading, and counted while streaming; the body
 *       is read no further and the connection is closed after the answer)
 *   415 not JSON (Content-Type other than application/json or application/*+json, or a Content-Encoding)
 *   400 malformed JSON or not UTF-8
 *   422 schema mismatch, `field` naming the first offending field; JSON nested deeper than `maxJsonDepth`
 *   404/405 unknown path or method; 503 enqueue failed or timed out
 *
 * Slow or idle clients: headers must arrive within `headersTimeoutMs` and the whole request within `requestTimeoutMs`,
 * checked every `connectionsCheckingIntervalMs`; an idle keep-alive connection is closed after `keepAliveTimeoutMs`;
 * past `maxConnections` open sockets, new ones are closed at once. A client that goes away mid-body is logged (499)
 * without a stack trace.
 *
 * Replays: there is no replay cache. A signed delivery replayed inside the tolerance window reaches `enqueue`
 * again, and the workflow id (derived from the signal id) makes that a no-op answered `200 {duplicate: true}`.
 * Events of another kind than `signal.created` are acknowledged `200 {accepted: false, ignored: true}` so the
 * sender does not retry them, and are not enqueued.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exceedsJsonDepth } from '../connectors/json-depth.ts';
import {
  AnyEventSchema,
  firstProblem,
  SIGNAL_CREATED,
  type SignalCreatedEvent,
  SignalCreatedEventSchema,
} from '../connectors/webhooks/events.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  decodeWebhookSecret,
  verifyWebhook,
  WebhookVerificationError,
} from '../connectors/webhooks/signature.ts';

/**
 * The largest event accepted. Real `signal.created` events are a few KB; each delivery attempt carries the event in
 * the workflow's history, so a bound here bounds that history (8 attempts per HTTP destination).
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Deeper JSON is refused (422) before anything is queued: nothing downstream has to walk it. */
export const DEFAULT_MAX_JSON_DEPTH = 32;
/** Slow-client limits (see the module comment); short because a signed event is small and sent at once. */
export interface ReceiverTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  connectionsCheckingIntervalMs: number;
}
export const RECEIVER_TIMEOUTS: Readonly<ReceiverTimeouts> = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
};
export const DEFAULT_MAX_CONNECTIONS = 1_000;

export type ReceiverAuth =
  /** Standard Webhooks signatures; several secrets during a rotation. */
  | { kind: 'standard-webhooks'; secrets: readonly string[]; toleranceSeconds?: number }
  /** A shared token in a header (compared in constant time); several values during a rotation. */
  | { kind: 'token'; header: string; value: string | readonly string[] }
  /** No authentication: refused unless `allowUnauthenticated: true` is also given. */
  | { kind: 'none' };

export interface EnqueueContext {
  /** The `webhook-id` header, when the sender sent one. */
  webhookId?: string;
  receivedAt: Date;
}

export interface EnqueueResult {
  /** True when the signal's workflow already existed: answered 200 `{accepted: true, duplicate: true}`. */
  duplicate?: boolean;
  /** The id of the workflow that now handles the event (echoed in the answer). */
  workflowId?: string;
}

// biome-ignore lint/suspicious/noConfusingVoidType: an enqueue that resolves to nothing means "accepted, not a duplicate"
export type Enqueue = (event: SignalCreatedEvent, ctx: EnqueueContext) => Promise<EnqueueResult | undefined | void>;

export interface ReceiverLogEntry {
  method: string;
  path: string;
  status: number;
  code?: string;
  signalId?: string;
  durationMs: number;
}

export interface WebhookReceiverOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Where events are POSTed (default `/webhooks`). `GET /healthz` answers `{ ok: true }`. */
  path?: string;
  auth: ReceiverAuth;
  /** Must be `true` for `auth: { kind: 'none' }`. */
  allowUnauthenticated?: boolean;
  enqueue: Enqueue;
  maxBodyBytes?: number;
  /** Deepest nesting of arrays/objects accepted in an event (default DEFAULT_MAX_JSON_DEPTH). */
  maxJsonDepth?: number;
  /** Open sockets at most; more are closed at once (default DEFAULT_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** Overrides of RECEIVER_TIMEOUTS. */
  timeouts?: Partial<ReceiverTimeouts>;
  /** An enqueue slower than this is answered 503 (default 10 000 ms). */
  enqueueTimeoutMs?: number;
  /** `Retry-After` of a 503 (default 5 s). */
  retryAfterSeconds?: number;
  /** The clock for timestamp tolerance checks. */
  now?: () => Date;
  log?: (entry: ReceiverLogEntry) => void;
  /** `GET /readyz`: 200 when it resolves `ready: true` (e.g. Temporal answers), else 503 with its body. */
  readiness?: () => Promise<{ ready: boolean }>;
}

export interface WebhookReceiver {
  /** `http://host:port` */
  url: string;
  /** `http://host:port/webhooks`: the address to subscribe. */
  webhookUrl: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** A refused request: its status, the `error` its answer body holds, and any extra headers of the answer. */
class Rejection extends Error {
  readonly status: number;
  readonly error: { code: string; message: string; field?: string };
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.error = field === undefined ? { code, message } : { code, message, field };
    this.headers = headers;
  }
}

/** The client went away before its request was complete: nothing to answer, nothing worth a stack trace. */
class ClientGone extends Error {
  constructor() {
    super('client closed the connection before the body was complete');
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The path of a request target (origin form, or absolute form); undefined when it is neither. */
function pathOf(target: string | undefined): string | undefined {
  if (!target) return undefined;
  if (target.startsWith('/') && !target.startsWith('//')) {
    const end = target.search(/[?#]/);
    return end === -1 ? target : target.slice(0, end);
  }
  if (!URL.canParse(target)) return undefined;
  const url = new URL(target);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.pathname : undefined;
}

/** Without `stream`, every decode() starts afresh, so one decoder serves every request. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isSignalCreated(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { event?: unknown }).event === SIGNAL_CREATED;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // Compare equal lengths only, and always do one comparison so timing does not reveal where they differ.
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const [mediaType, ...params] = value.split(';').map((s) => s.trim().toLowerCase());
  if (!mediaType) return false;
  const json = mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
  if (!json) return false;
  const charset = params.find((p) => p.startsWith('charset='));
  if (charset && !/^charset="?utf-8"?$/.test(charset)) return false;
  return true;
}

function validateAuth(auth: ReceiverAuth, allowUnauthenticated: boolean | undefined): void {
  switch (auth.kind) {
    case 'standard-webhooks':
      if (!auth.secrets.length) throw new TypeError('standard-webhooks auth needs at least one secret');
      for (const s of auth.secrets) decodeWebhookSecret(s);
      return;
    case 'token': {
      const values = typeof auth.value === 'string' ? [auth.value] : auth.value;
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(auth.header)) throw new TypeError('token auth needs a header name');
      if (!values.length || values.some((v) => v.length < 16)) {
        throw new TypeError('token auth needs token values of at least 16 characters');
      }
      return;
    }
    case 'none':
      if (allowUnauthenticated !== true) {
        throw new TypeError("auth 'none' accepts unauthenticated events; pass allowUnauthenticated: true to mean it");
      }
      return;
    default:
      throw new TypeError(`unknown auth kind ${(auth as { kind: unknown }).kind}`);
  }
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const {
    port = 0,
    host = '127.0.0.1',
    path = '/webhooks',
    auth,
    enqueue,
    maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
    maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
    maxConnections = DEFAULT_MAX_CONNECTIONS,
    enqueueTimeoutMs = 10_000,
    retryAfterSeconds = 5,
    now = () => new Date(),
    log,
  } = options;
  validateAuth(auth, options.allowUnauthenticated);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new RangeError('maxBodyBytes must be positive');
  if (!Number.isInteger(maxJsonDepth) || maxJsonDepth <= 0) throw new RangeError('maxJsonDepth must be positive');
  if (!Number.isInteger(maxConnections) || maxConnections <= 0) throw new RangeError('maxConnections must be positive');
  const timeouts = { ...RECEIVER_TIMEOUTS, ...options.timeouts };
  const tokenValues = auth.kind === 'token' ? (typeof auth.value === 'string' ? [auth.value] : [...auth.value]) : [];

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    extra: { headers?: Record<string, string>; close?: boolean } = {},
  ): void {
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(payload)),
      'cache-control': 'no-store',
      ...(extra.close ? { connection: 'close' } : {}),
      ...extra.headers,
    });
    res.end(payload);
    if (extra.close) {
      // The body was not (fully) read: read no further; once the answer is handed to the OS, drop the connection
      // (otherwise Node would drain the rest of the body to keep the connection alive).
      const socket = req.socket;
      res.once('finish', () => socket.destroy());
    }
  }

  function answerRejection(req: IncomingMessage, res: ServerResponse, r: Rejection, bodyPending: boolean): void {
    send(req, res, r.status, { error: r.error }, { headers: r.headers, close: bodyPending });
  }

  function checkToken(req: IncomingMessage): void {
    if (auth.kind !== 'token') return;
    const raw = req.headers[auth.header.toLowerCase()];
    const presented = Array.isArray(raw) ? raw[0] : raw;
    if (!presented) throw new Rejection(401, 'missing_token', `missing header ${auth.header}`);
    let ok = false;
    for (const value of tokenValues) if (safeEqual(presented, value)) ok = true;
    if (!ok) throw new Rejection(401, 'invalid_token', `header ${auth.header} does not hold a valid token`);
  }

  function checkSignature(req: IncomingMessage, body: Buffer): void {
    if (auth.kind !== 'standard-webhooks') return;
    try {
      verifyWebhook({
        headers: req.headers,
        body,
        secrets: auth.secrets,
        toleranceSeconds: auth.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
        now: now(),
      });
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      const code =
        err.reason === 'missing_headers'
          ? 'missing_signature'
          : err.reason === 'no_matching_signature' || err.reason === 'invalid_signature_format'
            ? 'invalid_signature'
            : err.reason === 'invalid_timestamp'
              ? 'invalid_timestamp'
              : 'stale_timestamp';
      throw new Rejection(401, code, err.message);
    }
  }

  /** Reads the body, counting bytes; resolves undefined (after answering 413) when it grows past the limit. */
  function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const onData = (chunk: Buffer) => {
        if (done) return;
        size += chunk.length;
        if (size > maxBodyBytes) {
          done = true;
          req.off('data', onData);
          req.pause();
          req.socket.pause();
          chunks.length = 0;
          resolve(undefined);
          return;
        }
        chunks.push(chunk);
      };
      req.on('data', onData);
      req.once('end', () => {
        if (done) return;
        done = true;
        resolve(Buffer.concat(chunks, size));
      });
      req.once('error', (err) => {
        if (done) return;
        done = true;
        reject(req.destroyed && !req.complete ? new ClientGone() : err);
      });
      req.once('close', () => {
        if (done) return;
        done = true;
        reject(new ClientGone());
      });
    });
  }

  async function withTimeout<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`enqueue took longer than ${enqueueTimeoutMs} ms`)), enqueueTimeoutMs);
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function handleEvent(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ status: number; code?: string; signalId?: string }> {
    let bodyPending = true;
    try {
      checkToken(req);
      if (req.headers['content-encoding'] && req.headers['content-encoding'] !== 'identity') {
        throw new Rejection(415, 'unsupported_media_type', 'compressed bodies are not accepted');
      }
      if (!isJsonContentType(req.headers['content-type'])) {
        throw new Rejection(415, 'unsupported_media_type', 'Content-Type must be application/json (UTF-8)');
      }
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        throw new Rejection(413, 'payload_too_large', `body is larger than ${maxBodyBytes} bytes`);
      }
      const body = await readBody(req);
      if (body === undefined)
        throw new Rejection(413, 'payload_too_large', `body is larger than ${maxBodyBytes} bytes`);
      bodyPending = false;

      checkSignature(req, body);

      let text: string;
      try {
        text = strictUtf8.decode(body);
      } catch {
        throw new Rejection(400, 'invalid_json', 'body is not valid UTF-8');
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new Rejection(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`);
      }
      if (exceedsJsonDepth(json, maxJsonDepth)) {
        throw new Rejection(
          422,
          'nesting_too_deep',
          `the event nests objects or arrays deeper than ${maxJsonDepth} levels; real events are shallow`,
        );
      }

      // The common case, a signal.created event, is validated once; anything else is first checked for its kind.
      if (!isSignalCreated(json)) {
        const kind = AnyEventSchema.safeParse(json);
        if (!kind.success) {
          const p = firstProblem(kind.error);
          throw new Rejection(422, 'validation_error', `${p.field || 'body'}: ${p.message}`, p.field || undefined);
        }
        send(req, res, 200, { accepted: false, ignored: true, reason: `event ${kind.data.event} is not handled` });
        return { status: 200, code: 'ignored' };
      }
      const parsed = SignalCreatedEventSchema.safeParse(json);
      if (!parsed.success) {
        const p = firstProblem(parsed.error);
        throw new Rejection(422, 'validation_error', `${p.field}: ${p.message}`, p.field);
      }
      const event = parsed.data;
      const signalId = event.signal.id;
      const webhookId = req.headers['webhook-id'];
      const ctx: EnqueueContext = { receivedAt: now(), ...(typeof webhookId === 'string' ? { webhookId } : {}) };

      let result: EnqueueResult | undefined;
      try {
        result = (await withTimeout(Promise.resolve().then(() => enqueue(event, ctx)))) || undefined;
      } catch (err) {
        throw new Rejection(
          503,
          'unavailable',
          `the event could not be accepted now: ${(err as Error).message}`,
          undefined,
          {
            'retry-after': String(retryAfterSeconds),
          },
        );
      }
      const duplicate = result?.duplicate === true;
      const status = duplicate ? 200 : 202;
      send(req, res, status, {
        accepted: true,
        duplicate,
        signal_id: signalId,
        ...(result?.workflowId ? { workflow_id: result.workflowId } : {}),
      });
      return { status, signalId, ...(duplicate ? { code: 'duplicate' } : {}) };
    } catch (err) {
      if (err instanceof ClientGone) {
        return answeredByParserError.has(req.socket)
          ? { status: 400, code: 'bad_request' }
          : { status: 499, code: 'client_closed' };
      }
      const r =
        err instanceof Rejection
          ? err
          : new Rejection(500, 'internal_error', 'the receiver failed to handle the event');
      if (!(err instanceof Rejection)) console.error('webhook receiver:', err);
      if (!res.headersSent) answerRejection(req, res, r, bodyPending);
      return { status: r.status, code: r.error.code };
    }
  }

  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs,
    },
    (req, res) => {
      clearTimeout(awaitingFirstRequest.get(req.socket));
      try {
        route(req, res);
      } catch (err) {
        // Nothing in routing should throw; if something does, this one request fails, not the process.
        console.error('webhook receiver: unexpected failure routing a request:', (err as Error).message);
        if (!res.headersSent) {
          answerRejection(req, res, new Rejection(400, 'bad_request', 'the request could not be routed'), true);
        } else res.destroy();
      }
    },
  );
  server.maxConnections = maxConnections;
  // Node's header timeout starts with the first byte: a socket that never sends one would stay open for good and
  // count against the connection cap. Such a socket is closed when the header timeout passes.
  const awaitingFirstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), timeouts.headersTimeoutMs);
    awaitingFirstRequest.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  // Sockets whose request Node's parser refused after it reached the handler, and that were answered here.
  const answeredByParserError = new WeakSet<Socket>();
  // Requests Node's parser refuses (bad request line, target, header, oversized headers, timeouts): a plain 4xx,
  // then close. Logged without the parser's stack: anyone can send these.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE') {
      // The client went away: nobody to answer. A request in progress is logged (499) by its handler.
      if (!pending) log?.({ method: '-', path: '-', status: 499, code: 'client_closed', durationMs: 0 });
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (pending) answeredByParserError.add(socket);
    else log?.({ method: '-', path: '-', status, code: err.code ?? 'client_error', durationMs: 0 });
    // A body that breaks framing (bad chunk sizes) fails after the request reached the handler, whose answer was
    // not begun yet: the 400 goes out here all the same.
    if (socket.writable && !pending?.headersSent) {
      const body = JSON.stringify({
        error: { code: status === 408 ? 'request_timeout' : 'bad_request', message: STATUS_TEXT[status] },
      });
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroySoon();
  });

  function route(req: IncomingMessage, res: ServerResponse): undefined {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const pathname = pathOf(req.url);
    const finish = (status: number, code?: string, signalId?: string): undefined => {
      log?.({
        method,
        path: pathname ?? '-',
        status,
        durationMs: Math.round(performance.now() - started),
        ...(code ? { code } : {}),
        ...(signalId ? { signalId } : {}),
      });
    };
    /** Answers a request turned away before its body is read, and logs it. */
    const reject = (rejection: Rejection): undefined => {
      answerRejection(req, res, rejection, true);
      return finish(rejection.status, rejection.error.code);
    };

    if (pathname === undefined) {
      return reject(new Rejection(400, 'bad_request', 'the request target is not a path'));
    }
    if (pathname === '/readyz' && options.readiness && (method === 'GET' || method === 'HEAD')) {
      void options.readiness().then(
        (result) => {
          send(req, res, result.ready ? 200 : 503, result);
          finish(result.ready ? 200 : 503);
        },
        (error: unknown) => {
          send(req, res, 503, { ready: false, error: String(error) });
          finish(503);
        },
      );
      return;
    }
    if (pathname === '/healthz') {
      if (method !== 'GET' && method !== 'HEAD') {
        return reject(new Rejection(405, 'method_not_allowed', 'use GET', undefined, { allow: 'GET, HEAD' }));
      }
      send(req, res, 200, { ok: true });
      return finish(200);
    }
    if (pathname !== path) {
      return reject(new Rejection(404, 'not_found', `no such path; events go to POST ${path}`));
    }
    if (method !== 'POST') {
      return reject(new Rejection(405, 'method_not_allowed', 'use POST', undefined, { allow: 'POST' }));
    }
    void handleEvent(req, res).then((r) => finish(r.status, r.code, r.signalId));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostForUrl}:${address.port}`;
  return {
    url,
    webhookUrl: `${url}${path}`,
    port: address.port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
