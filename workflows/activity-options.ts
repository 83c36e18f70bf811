import { ActivityFailure, type ActivityOptions, ApplicationFailure } from '@temporalio/workflow';
import { FATAL_FAILURE_TYPES } from '../connectors/errors.ts';
import { MAX_RETRY_AFTER_MS } from '../connectors/signal-api/limits.ts';

/**
 * Whether an activity's failure ends the whole job (a wrong key or a spent balance affects every batch alike). Which
 * failures Temporal retries is not listed here: the worker's interceptor marks each retryable or not by its rule.
 */
export function isFatalFailure(error: unknown): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type != null && FATAL_FAILURE_TYPES.includes(cause.type);
}

/**
 * Options for activities that call the Signal API: on the rate-limited queue, retried with backoff. They heartbeat
 * while they run (workers/activity-failures.ts), so a worker that dies mid-call is noticed within the heartbeat timeout and
 * its batches are retried elsewhere, instead of waiting out the start-to-close timeout.
 */
export function apiActivityOptions(
  taskQueue: string,
  maximumAttempts = 8,
  heartbeatTimeoutMs = 10_000,
): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      // The same ceiling as a server's Retry-After: neither Temporal's backoff nor the server parks a batch longer.
      maximumInterval: MAX_RETRY_AFTER_MS,
      maximumAttempts,
    },
  };
}

/** Options for activities that only touch storage (preparing input, writing manifests); they heartbeat too. */
export function storageActivityOptions(taskQueue: string, heartbeatTimeoutMs = 20_000): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 10,
    },
  };
}

/**
 * A night's write-back to the CRM: long (a Salesforce ingest job is polled to its end), heartbeating as it goes, and
 * retried over minutes, so a CRM outage of a few minutes is waited out; what is still not written stays pending.
 */
export function crmActivityOptions(taskQueue: string, heartbeatTimeoutMs = 5 * 60_000): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 6 },
  };
}
