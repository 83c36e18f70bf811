/**
 * deliverSignalEvent: one workflow per signal id (workflow id `signal-<id>`, started by the webhook intake, so a
 * redelivered event is a no-op) that delivers the event to every configured destination whose signal-type filter
 * matches:
 *
 * - HTTP destinations: one `deliverToEndpoint` attempt at a time on a Svix-like schedule that this workflow runs
 *   itself with durable timers (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each with jitter), keeping
 *   the attempt history. A `Retry-After` (429/503) postpones the next attempt to at least that delay. A 410 disables
 *   the destination and ends its delivery; after the last failed attempt the event and the attempts go to the
 *   dead-letter location. The `webhook-id` is the same for every attempt of one event and destination.
 * - Bucket destinations: the event is staged and its id signalled to the destination's collector
 *   (`bucketCollector`), which writes it into a rotated JSONL part.
 *
 * Destinations and their secrets live in worker configuration; the workflow knows only ids, kinds and filters.
 */

import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { CollectorActivities } from '../activities/collector.ts';
import type {
  DeliveryAttempt,
  DeliveryFailureDetails,
  DestinationRef,
  SignalCreatedEvent,
  WebhookDeliveryActivities,
} from '../activities/webhook-delivery.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { MAX_RETRY_AFTER_MS } from '../connectors/signal-api/limits.ts';

/** Svix's schedule: the delay before each attempt. 8 attempts over about 28 hours (plus jitter). */
export const DEFAULT_DELIVERY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
export const DEFAULT_JITTER_RATIO = 0.1;

export interface DeliveryScheduleOptions {
  /** Delay before each attempt (the first is usually 0); the number of entries is the number of attempts. */
  delaysMs?: number[];
  /** Each delay is spread by ±ratio (workflow-deterministic randomness). Default 0.1. */
  jitterRatio?: number;
  /** A `Retry-After` longer than this is capped (default and upper bound MAX_RETRY_AFTER_MS, 1 minute). */
  maxRetryAfterMs?: number;
}

export interface DeliverSignalEventInput {
  /** The normalized event (small; a few KB). */
  event: SignalCreatedEvent;
  /** Which destinations; default: every destination of the worker's configuration. */
  destinations?: DestinationRef[];
  schedule?: DeliveryScheduleOptions;
  /** Task queue of the delivery activities (default: the workflow's). */
  taskQueue?: string;
  /** Heartbeat timeout of one HTTP attempt (default 10 s); a dead worker is noticed this fast. */
  attemptHeartbeatTimeoutMs?: number;
}

export type DestinationOutcome =
  | 'pending'
  | 'delivered'
  | 'filtered'
  | 'gone'
  | 'disabled'
  | 'dead_lettered'
  | 'collected';

export interface DestinationDelivery {
  id: string;
  kind: 'http' | 'bucket';
  outcome: DestinationOutcome;
  webhookId?: string;
  attempts: DeliveryAttempt[];
  deadLetterUrl?: string;
}

export interface DeliverSignalEventResult {
  signalId: string;
  signalType: string;
  destinations: DestinationDelivery[];
}

export const deliveryStatusQuery = defineQuery<DeliverSignalEventResult>('deliveryStatus');

/** The `webhook-id` of one event at one destination: the same for every attempt, so receivers can dedupe. */
export function deliveryWebhookId(signalId: string, destinationId: string): string {
  return `msg_${signalId}_${destinationId}`;
}

export function matchesSignalType(dest: DestinationRef, signalType: string): boolean {
  return !dest.signalTypes || dest.signalTypes.length === 0 || dest.signalTypes.includes(signalType);
}

/**
 * The wait before an attempt: the schedule's delay, or the destination's `Retry-After` when longer, but never more
 * than MAX_RETRY_AFTER_MS (or a smaller `maxRetryAfterMs`) over the schedule: the documented schedule holds.
 */
export function nextAttemptDelay(
  scheduledMs: number,
  retryAfterMs: number,
  maxRetryAfterMs = MAX_RETRY_AFTER_MS,
): number {
  return Math.max(scheduledMs, Math.min(retryAfterMs, maxRetryAfterMs, MAX_RETRY_AFTER_MS));
}

function jittered(delayMs: number, ratio: number): number {
  if (delayMs <= 0 || ratio <= 0) return Math.max(0, delayMs);
  // Math.random is seeded per workflow run by the SDK: deterministic on replay.
  return Math.round(delayMs * (1 + ratio * (2 * Math.random() - 1)));
}

function describeFailure(err: unknown): {
  type: string;
  message: string;
  nonRetryable: boolean;
  details?: DeliveryFailureDetails;
} {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as DeliveryFailureDetails | undefined;
    return {
      type: cause.type ?? 'Error',
      message: cause.message,
      nonRetryable: cause.nonRetryable === true,
      ...(details ? { details } : {}),
    };
  }
  if (cause instanceof TimeoutFailure) {
    return { type: `ActivityTimeout:${cause.timeoutType}`, message: cause.message, nonRetryable: false };
  }
  return { type: 'Error', message: err instanceof Error ? err.message : String(err), nonRetryable: false };
}

/** The patch id of listing destinations in a local activity; histories from before it replay the activity. */
export const LOCAL_DESTINATIONS_PATCH = 'destinations-listed-locally';

/**
 * The destinations of the worker's configuration. On the workflow's own task queue they are read in a local
 * activity: the same worker configuration, without an activity task and a second workflow task on the server, which
 * is a third of the server's work per event and slows every start the intake makes while deliveries run. With
 * another activity queue, that queue's workers hold the configuration, so it stays a regular activity.
 */
async function listDestinations(
  activityQueue: string | undefined,
  setup: Pick<WebhookDeliveryActivities, 'listWebhookDestinations'>,
): Promise<DestinationRef[]> {
  if (activityQueue === undefined && patched(LOCAL_DESTINATIONS_PATCH)) {
    const local = proxyLocalActivities<WebhookDeliveryActivities>({
      startToCloseTimeout: '1 minute',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
    });
    return local.listWebhookDestinations();
  }
  return setup.listWebhookDestinations();
}

export async function deliverSignalEvent(input: DeliverSignalEventInput): Promise<DeliverSignalEventResult> {
  const { event } = input;
  const delays = input.schedule?.delaysMs ?? [...DEFAULT_DELIVERY_SCHEDULE_MS];
  if (delays.length === 0)
    throw ApplicationFailure.nonRetryable('the delivery schedule has no attempts', FAILURE_TYPE.input);
  const jitterRatio = input.schedule?.jitterRatio ?? DEFAULT_JITTER_RATIO;
  const maxRetryAfterMs = input.schedule?.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
  const heartbeatTimeout = input.attemptHeartbeatTimeoutMs ?? 10_000;
  const taskQueue = input.taskQueue ? { taskQueue: input.taskQueue } : {};

  const setup = proxyActivities<WebhookDeliveryActivities>({
    ...taskQueue,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  // One attempt per activity execution: this workflow owns the retry schedule.
  const attempt = proxyActivities<WebhookDeliveryActivities>({
    ...taskQueue,
    startToCloseTimeout: '3 minutes', // above the largest per-destination timeout (120 s)
    heartbeatTimeout,
    retry: { maximumAttempts: 1 },
  });
  const store = proxyActivities<WebhookDeliveryActivities & CollectorActivities>({
    ...taskQueue,
    startToCloseTimeout: '5 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      nonRetryableErrorTypes: [FAILURE_TYPE.destinationNotConfigured],
    },
  });

  const destinations = input.destinations ?? (await listDestinations(input.taskQueue, setup));
  const result: DeliverSignalEventResult = {
    signalId: event.signal.id,
    signalType: event.signal.type,
    destinations: destinations.map((d) => ({
      id: d.id,
      kind: d.kind,
      outcome: matchesSignalType(d, event.signal.type) ? 'pending' : 'filtered',
      attempts: [],
    })),
  };
  setHandler(deliveryStatusQuery, () => result);

  async function deliverHttp(state: DestinationDelivery): Promise<void> {
    const webhookId = deliveryWebhookId(event.signal.id, state.id);
    state.webhookId = webhookId;
    let retryAfterMs = 0;
    let reason = 'every attempt of the schedule failed';
    for (let i = 0; i < delays.length; i++) {
      const delay = nextAttemptDelay(jittered(delays[i]!, jitterRatio), retryAfterMs, maxRetryAfterMs);
      if (delay > 0) await sleep(delay);
      retryAfterMs = 0;
      const at = new Date().toISOString();
      try {
        const r = await attempt.deliverToEndpoint({ destinationId: state.id, event, webhookId, attempt: i + 1 });
        if (r.outcome === 'disabled') {
          state.outcome = 'disabled';
          return;
        }
        state.attempts.push({
          attempt: i + 1,
          at,
          ok: true,
          durationMs: r.durationMs,
          ...(r.status !== undefined ? { status: r.status } : {}),
        });
        state.outcome = 'delivered';
        return;
      } catch (err) {
        const f = describeFailure(err);
        const d = f.details;
        state.attempts.push({
          attempt: i + 1,
          at,
          ok: false,
          errorType: f.type,
          error: f.message,
          ...(d?.status !== undefined ? { status: d.status } : {}),
          ...(d?.durationMs !== undefined ? { durationMs: d.durationMs } : {}),
          ...(d?.retryAfterMs !== undefined ? { retryAfterMs: d.retryAfterMs } : {}),
        });
        if (f.type === FAILURE_TYPE.destinationGone) {
          state.outcome = 'gone';
          return;
        }
        if (f.nonRetryable) {
          reason = `${f.type}: ${f.message}`;
          break;
        }
        retryAfterMs = d?.retryAfterMs ?? 0;
      }
    }
    const dead = await store.writeDeadLetter({
      destinationId: state.id,
      webhookId,
      event,
      attempts: state.attempts,
      reason,
    });
    state.deadLetterUrl = dead.url;
    state.outcome = 'dead_lettered';
  }

  async function deliverBucket(state: DestinationDelivery): Promise<void> {
    await store.forwardToCollector({ destinationId: state.id, event });
    state.outcome = 'collected';
  }

  await Promise.all(
    result.destinations
      .filter((d) => d.outcome === 'pending')
      .map((d) => (d.kind === 'http' ? deliverHttp(d) : deliverBucket(d))),
  );
  return result;
}
