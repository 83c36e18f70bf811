/**
 * One interceptor around every activity the worker runs: it heartbeats while the activity runs, so a worker killed
 * mid-activity is noticed within the activity's heartbeat timeout, and it turns the kit's classified errors
 * (connectors/errors.ts) into the `ApplicationFailure` Temporal acts on: retryable or not by the error's rule, typed
 * by `FAILURE_TYPE`, and for a `Retry-After` the server's delay (capped at MAX_RETRY_AFTER_MS) as the next retry.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { KitError, SignalApiError } from '../connectors/errors.ts';
import { capRetryAfter } from '../connectors/signal-api/limits.ts';

/** How often a running activity tells Temporal that its worker is alive (well inside every heartbeat timeout). */
export const HEARTBEAT_INTERVAL_MS = 1_000;

/** The failure Temporal should act on for a thrown error; errors the kit does not classify pass through unchanged. */
export function toActivityFailure(error: unknown): unknown {
  if (!(error instanceof KitError)) return error;
  const retryAfterMs = error instanceof SignalApiError ? error.retryAfterMs : undefined;
  return ApplicationFailure.create({
    message: error.message,
    type: error.rule.type,
    nonRetryable: !error.retryable,
    cause: error,
    nextRetryDelay: retryAfterMs !== undefined && retryAfterMs > 0 ? capRetryAfter(retryAfterMs) : undefined,
  });
}

export const activityFailureInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
      try {
        return await next(input);
      } catch (error) {
        throw toActivityFailure(error);
      } finally {
        clearInterval(beat);
      }
    },
  },
});
