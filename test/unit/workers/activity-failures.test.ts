/**
 * The worker's one activity interceptor: every activity heartbeats while it runs and reaches Temporal with its
 * failure classified by the error's own rule (connectors/errors.ts).
 */

import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  BucketNotFoundError,
  CorruptDownloadError,
  CsvInputError,
  FATAL_FAILURE_TYPES,
  InputError,
  InsufficientCreditsError,
  NetworkError,
  NotFoundError,
  ObjectNotFoundError,
  RateLimitedError,
  ServerError,
  SignalApiError,
  ValidationError,
} from '../../../connectors/errors.ts';
import {
  activityFailureInterceptor,
  HEARTBEAT_INTERVAL_MS,
  toActivityFailure,
} from '../../../workers/activity-failures.ts';

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
    ['storage outage', new ObjectNotFoundError({ url: 's3://b', key: 'k' })],
    ['corrupt download', new CorruptDownloadError('line 3 of the download is not one JSON object')],
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
    [409, new SignalApiError(init(409, 'conflict'))],
    [422, new ValidationError(init(422, 'validation_error'))],
  ])('makes %i non-retryable with the server message', (_status, error) => {
    const f = toActivityFailure(error) as ApplicationFailure;
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(error.message);
  });

  it('ends the job on a wrong key, a spent balance, a missing bucket or an unreadable input', () => {
    const types = [
      new AuthenticationError(init(401, 'unauthorized')),
      new InsufficientCreditsError(init(402, 'insufficient_credits')),
      new BucketNotFoundError({ url: 's3://nope', bucket: 'nope' }),
      new InputError('input s3://b/in.csv has no data rows'),
      new CsvInputError('unclosed quote', 3),
    ].map((error) => toActivityFailure(error) as ApplicationFailure);
    for (const f of types) {
      expect(f.nonRetryable).toBe(true);
      expect(FATAL_FAILURE_TYPES).toContain(f.type);
    }
    for (const error of [new ValidationError(init(400, 'x')), new ServerError(init(500, 'x'))]) {
      expect(FATAL_FAILURE_TYPES).not.toContain((toActivityFailure(error) as ApplicationFailure).type);
    }
  });

  it('passes unknown errors through for Temporal to retry', () => {
    const error = new Error('disk hiccup');
    expect(toActivityFailure(error)).toBe(error);
  });
});

describe('activityFailureInterceptor', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const run = (body: () => Promise<unknown>) => {
    const heartbeat = vi.fn();
    const inbound = activityFailureInterceptor({ heartbeat } as unknown as Context).inbound!;
    const done = inbound.execute!({ args: [], headers: {} }, body);
    return { heartbeat, done };
  };

  it('heartbeats while the activity runs and stops when it returns', async () => {
    vi.useFakeTimers();
    let finish!: (value: string) => void;
    const { heartbeat, done } = run(() => new Promise<string>((resolve) => (finish = resolve)));
    await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS * 3);
    expect(heartbeat).toHaveBeenCalledTimes(3);
    finish('ok');
    await expect(done).resolves.toBe('ok');
    await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS * 3);
    expect(heartbeat).toHaveBeenCalledTimes(3);
  });

  it('hands Temporal the classified failure of what the activity threw', async () => {
    const { done } = run(() => Promise.reject(new AuthenticationError(init(401, 'unauthorized'))));
    const failure = await done.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('AuthenticationError');
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
  });
});
