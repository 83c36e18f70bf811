/** The receiver's options, limits and the shapes it exchanges with its `enqueue` and its log. */
import type { Server } from 'node:http';
import type { SignalCreatedEvent } from '../connectors/webhooks/events.ts';

/**
 * The largest event accepted. Real `signal.created` events are a few KB; each delivery attempt carries the event in
 * the workflow's history, so a bound here bounds that history (8 attempts per HTTP destination).
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Deeper JSON is refused (422) before anything is queued: nothing downstream has to walk it. */
export const DEFAULT_MAX_JSON_DEPTH = 32;
/**
 * Slow-client limits: headers must arrive within `headersTimeoutMs` and the whole request within
 * `requestTimeoutMs`, checked every `connectionsCheckingIntervalMs`; an idle keep-alive connection is closed after
 * `keepAliveTimeoutMs`. Short because a signed event is small and sent at once.
 */
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

/** The options with every default filled in; a limit that is not a positive integer throws at start. */
export function resolveReceiverOptions(options: WebhookReceiverOptions) {
  const resolved = {
    ...options,
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    path: options.path ?? '/webhooks',
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxJsonDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    maxConnections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    timeouts: { ...RECEIVER_TIMEOUTS, ...options.timeouts },
    enqueueTimeoutMs: options.enqueueTimeoutMs ?? 10_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 5,
    now: options.now ?? (() => new Date()),
  };
  for (const name of ['maxBodyBytes', 'maxJsonDepth', 'maxConnections'] as const) {
    if (!Number.isInteger(resolved[name]) || resolved[name] <= 0) throw new RangeError(`${name} must be positive`);
  }
  return resolved;
}
