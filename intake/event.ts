/**
 * One POSTed event, from headers to answer: token, media type and size, body, signature, JSON, the event's kind and
 * schema, then `enqueue` within its timeout. Answers 202 (accepted), 200 (a duplicate, or an event of another kind,
 * acknowledged and ignored), or the refusal's status; returns what the log line needs.
 *
 * Replays: there is no replay cache. A signed delivery replayed inside the tolerance window reaches `enqueue`
 * again, and the workflow id (derived from the signal id) makes that a no-op answered `200 {duplicate: true}`.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ClientGone, Rejection } from '../connectors/errors.ts';
import {
  AnyEventSchema,
  firstProblem,
  SIGNAL_CREATED,
  SignalCreatedEventSchema,
} from '../connectors/webhooks/events.ts';
import { answerRejection, send } from './answer.ts';
import type { AuthCheck } from './auth.ts';
import { checkBodyHeaders, parseJsonBody, readBody } from './body.ts';
import type { Enqueue, EnqueueContext, EnqueueResult } from './options.ts';

export interface EventHandlerSettings {
  auth: AuthCheck;
  enqueue: Enqueue;
  maxBodyBytes: number;
  maxJsonDepth: number;
  enqueueTimeoutMs: number;
  retryAfterSeconds: number;
  now: () => Date;
  /** True when Node's parser refused this socket's request after it reached the handler (and it was answered). */
  answeredByParser: (socket: Socket) => boolean;
}

export interface HandledEvent {
  status: number;
  code?: string;
  signalId?: string;
}

function isSignalCreated(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { event?: unknown }).event === SIGNAL_CREATED;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`enqueue took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function createEventHandler(settings: EventHandlerSettings) {
  const { auth, enqueue, maxBodyBytes, maxJsonDepth, enqueueTimeoutMs, retryAfterSeconds, now } = settings;

  async function accept(req: IncomingMessage, res: ServerResponse, json: unknown): Promise<HandledEvent> {
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
      result =
        (await withTimeout(
          Promise.resolve().then(() => enqueue(event, ctx)),
          enqueueTimeoutMs,
        )) || undefined;
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
  }

  return async function handleEvent(req: IncomingMessage, res: ServerResponse): Promise<HandledEvent> {
    let bodyPending = true;
    try {
      auth.beforeBody(req);
      checkBodyHeaders(req, maxBodyBytes);
      const body = await readBody(req, maxBodyBytes);
      bodyPending = false;
      auth.onBody(req, body);
      return await accept(req, res, parseJsonBody(body, maxJsonDepth));
    } catch (err) {
      if (err instanceof ClientGone) {
        return settings.answeredByParser(req.socket)
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
  };
}
