/**
 * The webhook intake: an HTTP server that accepts the service's `signal.created` events (spec section 6), checks
 * that they are authentic and well formed, and hands each one to an injected `enqueue` (in production: start the
 * durable workflow `signal-<signal.id>`). It answers 202 only after `enqueue` resolved, so a 2xx means the event is
 * durably accepted; a failing `enqueue` is a 503 with `Retry-After`, and the sender retries.
 *
 * Rejections (nothing is enqueued), each a JSON body `{ "error": { "code", "message", "field"? } }`:
 *   401 missing/invalid signature or token, timestamp outside the tolerance
 *   413 body over `maxBodyBytes` (checked on Content-Length before reading, and counted while streaming; the body
 *       is read no further and the connection is closed after the answer)
 *   415 not JSON (Content-Type other than application/json or application/*+json, or a Content-Encoding)
 *   400 malformed JSON or not UTF-8
 *   422 schema mismatch, `field` naming the first offending field
 *   404/405 unknown path or method; 503 enqueue failed or timed out
 *
 * Replays: there is no replay cache. A signed delivery replayed inside the tolerance window reaches `enqueue`
 * again, and the workflow id (derived from the signal id) makes that a no-op answered `200 {duplicate: true}`.
 * Events of another kind than `signal.created` are acknowledged `200 {accepted: false, ignored: true}` so the
 * sender does not retry them, and are not enqueued.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AnyEventSchema,
  firstProblem,
  SIGNAL_CREATED,
  type SignalCreatedEvent,
  SignalCreatedEventSchema,
} from '../../connectors/webhooks/events.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  decodeWebhookSecret,
  verifyWebhook,
  WebhookVerificationError,
} from '../../connectors/webhooks/signature.ts';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

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
  /** An enqueue slower than this is answered 503 (default 10 000 ms). */
  enqueueTimeoutMs?: number;
  /** `Retry-After` of a 503 (default 5 s). */
  retryAfterSeconds?: number;
  /** The clock for timestamp tolerance checks. */
  now?: () => Date;
  log?: (entry: ReceiverLogEntry) => void;
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

class Rejection extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.headers = headers;
  }
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
    enqueueTimeoutMs = 10_000,
    retryAfterSeconds = 5,
    now = () => new Date(),
    log,
  } = options;
  validateAuth(auth, options.allowUnauthenticated);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new RangeError('maxBodyBytes must be positive');
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
    const error: Record<string, string> = { code: r.code, message: r.message };
    if (r.field !== undefined) error['field'] = r.field;
    send(req, res, r.status, { error }, { headers: r.headers, close: bodyPending });
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
        reject(err);
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
        text = new TextDecoder('utf-8', { fatal: true }).decode(body);
      } catch {
        throw new Rejection(400, 'invalid_json', 'body is not valid UTF-8');
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new Rejection(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`);
      }

      const kind = AnyEventSchema.safeParse(json);
      if (!kind.success) {
        const p = firstProblem(kind.error);
        throw new Rejection(422, 'validation_error', `${p.field || 'body'}: ${p.message}`, p.field || undefined);
      }
      if (kind.data.event !== SIGNAL_CREATED) {
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
      const r =
        err instanceof Rejection
          ? err
          : new Rejection(500, 'internal_error', 'the receiver failed to handle the event');
      if (!(err instanceof Rejection)) console.error('webhook receiver:', err);
      if (!res.headersSent) answerRejection(req, res, r, bodyPending);
      return { status: r.status, code: r.code };
    }
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://receiver');
    const method = req.method ?? 'GET';
    const finish = (status: number, code?: string, signalId?: string) =>
      log?.({
        method,
        path: url.pathname,
        status,
        durationMs: Math.round(performance.now() - started),
        ...(code ? { code } : {}),
        ...(signalId ? { signalId } : {}),
      });

    if (url.pathname === '/healthz') {
      if (method !== 'GET' && method !== 'HEAD') {
        answerRejection(
          req,
          res,
          new Rejection(405, 'method_not_allowed', 'use GET', undefined, { allow: 'GET, HEAD' }),
          true,
        );
        return finish(405, 'method_not_allowed');
      }
      send(req, res, 200, { ok: true });
      return finish(200);
    }
    if (url.pathname !== path) {
      answerRejection(req, res, new Rejection(404, 'not_found', `no such path; events go to POST ${path}`), true);
      return finish(404, 'not_found');
    }
    if (method !== 'POST') {
      answerRejection(
        req,
        res,
        new Rejection(405, 'method_not_allowed', 'use POST', undefined, { allow: 'POST' }),
        true,
      );
      return finish(405, 'method_not_allowed');
    }
    void handleEvent(req, res).then((r) => finish(r.status, r.code, r.signalId));
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;

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
