/**
 * The webhook intake: an HTTP server that accepts the service's `signal.created` events (spec section 6), checks
 * that they are authentic and well formed, and hands each one to an injected `enqueue` (in production: start the
 * durable workflow `signal-<signal.id>`). It answers 202 only after `enqueue` resolved, so a 2xx means the event is
 * durably accepted; a failing `enqueue` is a 503 with `Retry-After`, and the sender retries. Events of another kind
 * than `signal.created` are acknowledged `200 {accepted: false, ignored: true}` and not enqueued.
 *
 * This file creates the server and routes; the rest lives beside it: sockets.ts (socket limits and requests Node's
 * parser refuses), auth.ts (token and signature), body.ts (media type, size, strict JSON), event.ts (kind, schema,
 * enqueue), answer.ts (how refusals are answered), options.ts (options, limits and their defaults).
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Rejection } from '../connectors/errors.ts';
import { answerRejection, send } from './answer.ts';
import { createAuthCheck, validateAuth } from './auth.ts';
import { createEventHandler } from './event.ts';
import { resolveReceiverOptions, type WebhookReceiver, type WebhookReceiverOptions } from './options.ts';
import { guardSockets } from './sockets.ts';

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
  validateAuth(options.auth, options.allowUnauthenticated);
  const o = resolveReceiverOptions(options);
  const { path, timeouts, log } = o;

  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs,
    },
    (req, res) => {
      sockets.requestArrived(req.socket);
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
  server.maxConnections = o.maxConnections;
  const sockets = guardSockets(server, timeouts.headersTimeoutMs, log);
  const handleEvent = createEventHandler({
    auth: createAuthCheck(o.auth, o.now),
    enqueue: o.enqueue,
    maxBodyBytes: o.maxBodyBytes,
    maxJsonDepth: o.maxJsonDepth,
    enqueueTimeoutMs: o.enqueueTimeoutMs,
    retryAfterSeconds: o.retryAfterSeconds,
    now: o.now,
    answeredByParser: sockets.answeredByParser,
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
    if (pathname === '/readyz' && o.readiness && (method === 'GET' || method === 'HEAD')) {
      void o.readiness().then(
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
    server.listen(o.port, o.host, () => {
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
