import { ApplicationFailure } from '@temporalio/common';
import { capRetryAfter } from '../../connectors/signal-api/limits.ts';

/** Maps an API client error onto the failure Temporal should act on. */
const TYPE_BY_NAME: Record<string, { type: string; retryable: boolean }> = {
  RateLimitedError: { type: 'RateLimited', retryable: true },
  ServerError: { type: 'ServerError', retryable: true },
  NetworkError: { type: 'NetworkError', retryable: true },
  AuthenticationError: { type: 'AuthenticationError', retryable: false },
  InsufficientCreditsError: { type: 'InsufficientCreditsError', retryable: false },
  ValidationError: { type: 'ValidationError', retryable: false },
  NotFoundError: { type: 'NotFoundError', retryable: false },
  UnexpectedResponseError: { type: 'UnexpectedResponseError', retryable: false },
  // Storage: a missing bucket or a malformed URL will not fix itself; transient storage errors stay retryable.
  BucketNotFoundError: { type: 'StorageConfigError', retryable: false },
  InvalidStorageUrlError: { type: 'StorageConfigError', retryable: false },
  StorageConfigError: { type: 'StorageConfigError', retryable: false },
  // An input the parser cannot read past (an unclosed quote spanning lines, a runaway record).
  CsvInputError: { type: 'InputError', retryable: false },
};

/**
 * Turns a thrown error into an ApplicationFailure: 429/5xx/network errors stay retryable (a 429 asks Temporal for
 * the server's `Retry-After`, capped at MAX_RETRY_AFTER_MS, as the next delay), 400/401/402/403/404/422 become non-retryable with the
 * server's message. Other errors pass through unchanged.
 */
export function toActivityFailure(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof ApplicationFailure) return error;
  const mapping = TYPE_BY_NAME[error.name];
  if (!mapping) return error;
  const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return ApplicationFailure.create({
    message: error.message,
    type: mapping.type,
    nonRetryable: !mapping.retryable || (error as { retryable?: unknown }).retryable === false,
    cause: error,
    nextRetryDelay: typeof retryAfterMs === 'number' && retryAfterMs > 0 ? capRetryAfter(retryAfterMs) : undefined,
  });
}

/** Runs an activity body and converts client errors on the way out. */
export async function withFailureMapping<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toActivityFailure(error);
  }
}

/** A problem with the job's input or configuration that no retry can fix. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

export function inputFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: 'InputError', nonRetryable: true });
}
