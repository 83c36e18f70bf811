import type { ActivityOptions } from '@temporalio/workflow';
import { MAX_RETRY_AFTER_MS } from '../connectors/signal-api/limits.ts';

/** Errors that no retry can fix; everything else (429, 5xx, timeouts, resets) is retried by Temporal. */
export const NON_RETRYABLE_API_ERRORS = [
  'ValidationError',
  'AuthenticationError',
  'InsufficientCreditsError',
  'NotFoundError',
  'InputError',
  'StorageConfigError',
];

/** Errors that end the whole job (a wrong key or a spent balance affects every batch alike). */
export const FATAL_API_ERRORS = ['AuthenticationError', 'InsufficientCreditsError', 'StorageConfigError', 'InputError'];

/**
 * Options for activities that call the Signal API: on the rate-limited queue, retried with backoff. They heartbeat
 * while they run (activities/registry.ts), so a worker that dies mid-call is noticed within the heartbeat timeout and
 * its batches are retried elsewhere, instead of waiting out the start-to-close timeout.
 */
export function apiActivityOptions(taskQueue: string, maximumAttempts = 8): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      // The same ceiling as a server's Retry-After: neither Temporal's backoff nor the server parks a batch longer.
      maximumInterval: MAX_RETRY_AFTER_MS,
      maximumAttempts,
      nonRetryableErrorTypes: NON_RETRYABLE_API_ERRORS,
    },
  };
}

/** Options for activities that only touch storage (preparing input, writing manifests); they heartbeat too. */
export function storageActivityOptions(taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '20 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 10,
      nonRetryableErrorTypes: NON_RETRYABLE_API_ERRORS,
    },
  };
}
