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
 *
 * This file creates the server and routes; the pieces of one event's handling live beside it: auth.ts (token and
 * signature), body.ts (media type, size, strict JSON), event.ts (kind, schema, enqueue), answer.ts (how refusals are
 * answered), options.ts (options and limits).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerRejection, parserErrorStatus, Rejection, rawParserAnswer, send } from './answer.ts';
import { createAuthCheck, validateAuth } from './auth.ts';
import { createEventHandler } from './event.ts';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_JSON_DEPTH,
  RECEIVER_TIMEOUTS,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './options.ts';

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

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const {
    port = 0,
    host = '127.0.0.1',
    path = '/webhooks',
    auth,
    maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
    maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
    maxConnections = DEFAULT_MAX_CONNECTIONS,
    now = () => new Date(),
    log,
  } = options;
  validateAuth(auth, options.allowUnauthenticated);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new RangeError('maxBodyBytes must be positive');
  if (!Number.isInteger(maxJsonDepth) || maxJsonDepth <= 0) throw new RangeError('maxJsonDepth must be positive');
  if (!Number.isInteger(maxConnections) || maxConnections <= 0) throw new RangeError('maxConnections must be positive');
  const timeouts = { ...RECEIVER_TIMEOUTS, ...options.timeouts };

  // Sockets whose request Node's parser refused after it reached the handler, and that were answered here.
  const answeredByParserError = new WeakSet<Socket>();
  const handleEvent = createEventHandler({
    auth: createAuthCheck(auth, now),
    enqueue: options.enqueue,
    maxBodyBytes,
    maxJsonDepth,
    enqueueTimeoutMs: options.enqueueTimeoutMs ?? 10_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 5,
    now,
    answeredByParser: (socket) => answeredByParserError.has(socket),
  });

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
    const status = parserErrorStatus(err.code);
    if (pending) answeredByParserError.add(socket);
    else log?.({ method: '-', path: '-', status, code: err.code ?? 'client_error', durationMs: 0 });
    // A body that breaks framing (bad chunk sizes) fails after the request reached the handler, whose answer was
    // not begun yet: the 400 goes out here all the same.
    if (socket.writable && !pending?.headersSent) socket.end(rawParserAnswer(status));
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
