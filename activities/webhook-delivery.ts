/**
 * Activities of webhook delivery: POST one signed event to one HTTP destination, record a dead letter, and tell the
 * workflow which destinations exist. Built by `createWebhookDeliveryActivities(deps)`; the destinations (with their
 * secrets) come from worker configuration, never from workflow arguments.
 *
 * `deliverToEndpoint` makes exactly one attempt; the workflow owns the retry schedule. Its failures are typed
 * application failures whose first detail is a `DeliveryFailureDetails`:
 *   DeliveryFailed       retryable: non-2xx (3xx included: redirects are never followed), reset, refused...
 *   DeliveryTimeout      retryable: no complete answer within the destination's timeout (15 s by default)
 *   DestinationGone      non-retryable: the endpoint answered 410; the destination is disabled (state recorded)
 *   DestinationBlocked   non-retryable: the URL resolves to an address outside the allowlist (SSRF guard)
 *   DestinationNotConfigured  non-retryable: no HTTP destination of that id in this worker's configuration
 * A 429 or 503 with `Retry-After` carries `retryAfterMs` (and `nextRetryDelay`), which the workflow honours.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { type Dispatcher, request, errors as undiciErrors } from 'undici';
import { DestinationBlockedError, FAILURE_RULES } from '../connectors/errors.ts';
import { parseRetryAfter } from '../connectors/retry-after.ts';
import type { Store } from '../connectors/storage/store.ts';
import { readJsonIfPresent } from '../connectors/storage/store-io.ts';
import {
  type Destination,
  type DestinationRef,
  destinationRef,
  type HttpDestination,
  type WebhookDeliveryConfig,
} from '../connectors/webhooks/destinations.ts';
import type { SignalCreatedEvent } from '../connectors/webhooks/events.ts';
import { createSafeDispatcher, type Resolver } from '../connectors/webhooks/safe-dispatcher.ts';
import { signWebhook } from '../connectors/webhooks/signature.ts';
import { deadLetterKey, destinationStateKey } from './webhook-layout.ts';

export type { DestinationRef, SignalCreatedEvent };

export const USER_AGENT = 'signal-kit-webhooks/0.1';

/** What every webhook activity is built with: delivery here, and the bucket collector (activities/collector.ts). */
export interface WebhookActivityBaseDeps {
  config: WebhookDeliveryConfig;
  /** Opens a store for a base URL (file://, s3://, gs://), as the other activities get it. */
  openStore: (url: string) => Store;
  /** Wall clock for signatures and records (tests may inject). */
  now?: () => Date;
}

export interface WebhookActivityDeps extends WebhookActivityBaseDeps {
  /** Outbound HTTP; default: the SSRF-safe dispatcher with `config.allowlist`. */
  dispatcher?: Dispatcher;
  /** Host resolution for the default dispatcher (tests inject one). */
  resolver?: Resolver;
}

export interface DeliverToEndpointInput {
  destinationId: string;
  event: SignalCreatedEvent;
  /** Stable for one event and destination across every attempt, so receivers can dedupe. */
  webhookId: string;
  attempt: number;
}

export interface DeliveryResult {
  outcome: 'delivered' | 'disabled';
  status?: number;
  durationMs: number;
}

export interface DeliveryFailureDetails {
  status?: number;
  retryAfterMs?: number;
  durationMs: number;
  /** The first bytes of the answer, for the attempt history. */
  body?: string;
  location?: string;
}

export interface DestinationState {
  disabled: boolean;
  disabledAt?: string;
  reason?: string;
  status?: number;
}

export interface DeliveryAttempt {
  attempt: number;
  /** ISO time the attempt started (workflow time). */
  at: string;
  ok: boolean;
  status?: number;
  errorType?: string;
  error?: string;
  durationMs?: number;
  retryAfterMs?: number;
}

export interface WriteDeadLetterInput {
  destinationId: string;
  webhookId: string;
  event: SignalCreatedEvent;
  attempts: DeliveryAttempt[];
  reason: string;
}

const SNIPPET_BYTES = 512;

async function readSnippet(body: AsyncIterable<Buffer> & { destroy?: (err?: Error) => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < SNIPPET_BYTES) chunks.push(chunk.subarray(0, SNIPPET_BYTES - size));
    size += chunk.length;
    if (size >= 64 * 1024) {
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A failure of one delivery attempt; whether Temporal may retry it is the type's rule in connectors/errors.ts. */
type DeliveryFailureKind =
  | 'destinationNotConfigured'
  | 'destinationBlocked'
  | 'destinationGone'
  | 'deliveryTimeout'
  | 'deliveryFailed';

function failure(
  kind: DeliveryFailureKind,
  message: string,
  details: DeliveryFailureDetails,
  options: { cause?: Error } = {},
): ApplicationFailure {
  const rule = FAILURE_RULES[kind];
  return ApplicationFailure.create({
    type: rule.type,
    message,
    nonRetryable: !rule.retryable,
    details: [details],
    ...(details.retryAfterMs !== undefined ? { nextRetryDelay: details.retryAfterMs } : {}),
    ...(options.cause ? { cause: options.cause } : {}),
  });
}

function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/** What the delivery activities run with: the worker's deps, with the clock and the dispatcher (built on first use). */
export interface DeliveryContext {
  config: WebhookDeliveryConfig;
  openStore: (url: string) => Store;
  now: () => Date;
  dispatcher: () => Dispatcher;
}

export function deliveryContext(deps: WebhookActivityDeps): DeliveryContext {
  let dispatcher = deps.dispatcher;
  return {
    config: deps.config,
    openStore: deps.openStore,
    now: deps.now ?? (() => new Date()),
    dispatcher: () => {
      dispatcher ??= createSafeDispatcher({
        allowlist: deps.config.allowlist,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      });
      return dispatcher;
    },
  };
}

/** Where destination states and dead letters live (`config.deadLetterUrl`). */
function stateStore(ctx: DeliveryContext): Store {
  return ctx.openStore(ctx.config.deadLetterUrl);
}

function httpDestination(ctx: DeliveryContext, id: string): HttpDestination {
  const d = ctx.config.destinations.find((x): x is HttpDestination => x.id === id && x.kind === 'http');
  if (!d) {
    throw failure('destinationNotConfigured', `no HTTP webhook destination "${id}" in this worker's configuration`, {
      durationMs: 0,
    });
  }
  return d;
}

async function readState(ctx: DeliveryContext, id: string): Promise<DestinationState | undefined> {
  return readJsonIfPresent<DestinationState>(stateStore(ctx), destinationStateKey(id));
}

async function writeState(ctx: DeliveryContext, id: string, state: DestinationState): Promise<void> {
  await stateStore(ctx).writeText(destinationStateKey(id), `${JSON.stringify(state, null, 2)}\n`, {
    contentType: 'application/json',
  });
}

/** Every configured destination as the workflow may know it: id, kind, signal-type filter. */
export async function listWebhookDestinations(ctx: DeliveryContext): Promise<DestinationRef[]> {
  return ctx.config.destinations.map((d: Destination) => destinationRef(d));
}

/** One attempt: POST the signed event to the destination. */
export async function deliverToEndpoint(ctx: DeliveryContext, input: DeliverToEndpointInput): Promise<DeliveryResult> {
  const dest = httpDestination(ctx, input.destinationId);
  const state = await readState(ctx, dest.id);
  if (state?.disabled) return { outcome: 'disabled', durationMs: 0 };

  const answer = await postSigned(ctx, dest, JSON.stringify(input.event), input.webhookId);
  const { status, durationMs } = answer;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status, durationMs };
  if (status === 410) {
    await writeState(ctx, dest.id, {
      disabled: true,
      disabledAt: ctx.now().toISOString(),
      reason: `answered 410 Gone to ${input.webhookId}`,
      status,
    });
    const details = { status, durationMs, ...(answer.snippet ? { body: answer.snippet } : {}) };
    throw failure('destinationGone', `destination ${dest.id} answered 410 Gone; it is now disabled`, details);
  }
  throw answerFailure(ctx, answer);
}

/** Where a signed POST goes: its URL, the secrets it is signed with (none: unsigned), its timeout. */
export interface SignedTarget {
  url: string;
  secret: string | string[] | undefined;
  timeout_ms: number;
}

/** What a POST was answered: its status, headers and first bytes. */
export interface PostAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  snippet: string;
  durationMs: number;
}

/**
 * One POST of `body` through the worker's SSRF-safe dispatcher, signed as Standard Webhooks sign it under
 * `webhookId`: the answer, or the typed failure of a request that got none (blocked, timed out, refused).
 */
export async function postSigned(
  ctx: DeliveryContext,
  target: SignedTarget,
  body: string,
  webhookId: string,
): Promise<PostAnswer> {
  const secrets = target.secret === undefined || target.secret.length === 0 ? undefined : target.secret;
  const headers = secrets ? signWebhook({ id: webhookId, timestamp: ctx.now(), body, secret: secrets }) : {};
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeout = AbortSignal.timeout(target.timeout_ms);
  const cancel = cancellationSignal();
  const signal = cancel ? AbortSignal.any([timeout, cancel]) : timeout;
  try {
    const res = await request(target.url, {
      method: 'POST',
      body,
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
      dispatcher: ctx.dispatcher(),
      signal,
      headersTimeout: target.timeout_ms,
      bodyTimeout: target.timeout_ms,
    });
    const snippet = await readSnippet(res.body);
    return { status: res.statusCode, headers: res.headers, snippet, durationMs: elapsed() };
  } catch (err) {
    const durationMs = elapsed();
    if (err instanceof DestinationBlockedError) {
      throw failure('destinationBlocked', err.message, { durationMs }, { cause: err });
    }
    if (cancel?.aborted) throw err; // the activity was cancelled: let the SDK report it
    const timedOut =
      timeout.aborted ||
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      err instanceof undiciErrors.ConnectTimeoutError;
    if (timedOut) {
      throw failure('deliveryTimeout', `no complete answer within ${target.timeout_ms} ms`, {
        durationMs,
      });
    }
    const e = err as Error & { code?: string };
    throw failure('deliveryFailed', `request failed: ${e.code ? `${e.code} ` : ''}${e.message}`, {
      durationMs,
    });
  }
}

/** The retryable failure of an answer that is not 2xx: a redirect (never followed), a 429 or 503 with `Retry-After`. */
export function answerFailure(ctx: DeliveryContext, answer: PostAnswer): ApplicationFailure {
  const { status, durationMs } = answer;
  const details: DeliveryFailureDetails = { status, durationMs, ...(answer.snippet ? { body: answer.snippet } : {}) };
  if (status >= 300 && status < 400) {
    const location = answer.headers['location'];
    const loc = Array.isArray(location) ? location[0] : location;
    return failure('deliveryFailed', `answered ${status}; redirects are not followed`, {
      ...details,
      ...(loc ? { location: loc } : {}),
    });
  }
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], ctx.now());
    return failure('deliveryFailed', `answered ${status}`, {
      ...details,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  return failure('deliveryFailed', `answered ${status}`, details);
}

/** Writes the event and its attempt history where nothing is lost; the key is deterministic (a retry overwrites). */
export async function writeDeadLetter(ctx: DeliveryContext, input: WriteDeadLetterInput): Promise<{ url: string }> {
  const store = stateStore(ctx);
  const key = deadLetterKey(input.destinationId, input.event.signal.id);
  const record = {
    destination_id: input.destinationId,
    webhook_id: input.webhookId,
    signal_id: input.event.signal.id,
    reason: input.reason,
    dead_lettered_at: ctx.now().toISOString(),
    attempts: input.attempts,
    event: input.event,
  };
  await store.writeText(key, `${JSON.stringify(record, null, 2)}\n`, {
    contentType: 'application/json',
    metadata: { 'signal-id': input.event.signal.id, 'destination-id': input.destinationId },
  });
  return { url: store.urlOf(key) };
}

/** The recorded state of a destination (disabled after a 410). */
export async function getDestinationState(
  ctx: DeliveryContext,
  input: { destinationId: string },
): Promise<DestinationState> {
  return (await readState(ctx, input.destinationId)) ?? { disabled: false };
}

/** Clears a destination's disabled state (an operator fixed the endpoint). */
export async function enableDestination(ctx: DeliveryContext, input: { destinationId: string }): Promise<void> {
  await writeState(ctx, input.destinationId, { disabled: false });
}

/** The delivery activities as the worker registers them (one dispatcher shared by every attempt). */
export function createWebhookDeliveryActivities(deps: WebhookActivityDeps) {
  const ctx = deliveryContext(deps);
  return {
    listWebhookDestinations: () => listWebhookDestinations(ctx),
    deliverToEndpoint: (input: DeliverToEndpointInput) => deliverToEndpoint(ctx, input),
    writeDeadLetter: (input: WriteDeadLetterInput) => writeDeadLetter(ctx, input),
    getDestinationState: (input: { destinationId: string }) => getDestinationState(ctx, input),
    enableDestination: (input: { destinationId: string }) => enableDestination(ctx, input),
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
