export type { SignalApiErrorInit } from '../errors.ts';
export {
  AuthenticationError,
  InsufficientCreditsError,
  isRetryable,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  retryAfterMsOf,
  ServerError,
  SignalApiError,
  UnexpectedResponseError,
  ValidationError,
} from '../errors.ts';
export { parseRetryAfter } from '../retry-after.ts';
export type { SignalCreatedEvent } from '../webhooks/events.ts';
export { parseSignalEvent, SignalClient } from './client.ts';
export { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RequestPacing } from './http.ts';
export * from './limits.ts';
export { absoluteLinkedinUrl, normalizeDomain, parseDateTime, toIsoUtc } from './scalars.ts';
export type * from './types.ts';
export { USER_AGENT, VERSION } from './version.ts';
