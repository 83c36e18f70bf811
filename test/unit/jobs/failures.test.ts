import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { toActivityFailure } from '../../../activities/jobs/failures.ts';
import {
  AuthenticationError,
  InsufficientCreditsError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  ValidationError,
} from '../../../connectors/signal-api/errors.ts';
import { BucketNotFoundError } from '../../../connectors/storage/errors.ts';
import { FATAL_API_ERRORS, NON_RETRYABLE_API_ERRORS } from '../../../workflows/activity-options.ts';

const init = (status: number, code: string) => ({ status, code, message: `server said ${code}`, requestId: 'req_1' });

describe('toActivityFailure', () => {
  it('asks Temporal for exactly the Retry-After delay on a 429', () => {
    const failure = toActivityFailure(new RateLimitedError({ ...init(429, 'rate_limited'), retryAfterMs: 7000 }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const f = failure as ApplicationFailure;
    expect(f.nonRetryable).toBe(false);
    expect(f.type).toBe('RateLimited');
    expect(f.nextRetryDelay).toBe(7000);
    expect(f.message).toBe('server said rate_limited');
  });

  it.each([
    ['5xx', new ServerError(init(503, 'unavailable'))],
    ['reset', new NetworkError(init(0, 'ECONNRESET'))],
  ])('keeps %s retryable with Temporal backoff', (_name, error) => {
    const f = toActivityFailure(error) as ApplicationFailure;
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBeUndefined();
  });

  it.each([
    [400, new ValidationError(init(400, 'invalid_json'))],
    [401, new AuthenticationError(init(401, 'unauthorized'))],
    [402, new InsufficientCreditsError(init(402, 'insufficient_credits'))],
    [403, new AuthenticationError(init(403, 'forbidden'))],
    [404, new NotFoundError(init(404, 'not_found'))],
    [422, new ValidationError(init(422, 'validation_error'))],
  ])('makes %i non-retryable with the server message', (_status, error) => {
    const f = toActivityFailure(error) as ApplicationFailure;
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(error.message);
    expect(NON_RETRYABLE_API_ERRORS).toContain(f.type);
  });

  it('ends the job on a wrong key, a spent balance or a missing bucket', () => {
    const types = [
      new AuthenticationError(init(401, 'unauthorized')),
      new InsufficientCreditsError(init(402, 'insufficient_credits')),
      new BucketNotFoundError({ url: 's3://nope', bucket: 'nope' }),
    ].map((error) => (toActivityFailure(error) as ApplicationFailure).type);
    for (const type of types) expect(FATAL_API_ERRORS).toContain(type);
  });

  it('passes unknown errors through for Temporal to retry', () => {
    const error = new Error('disk hiccup');
    expect(toActivityFailure(error)).toBe(error);
  });
});
