/**
 * A server's Retry-After is honoured up to MAX_RETRY_AFTER_MS and no further, wherever the kit honours one: API
 * calls (and the `nextRetryDelay` handed to Temporal), downloads, and webhook destinations, all read by one parser
 * (connectors/retry-after.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  RateLimitedError,
  ServerError,
  SignalClient,
} from '../../../connectors/signal-api/index.ts';
import { toActivityFailure } from '../../../workers/activity-failures.ts';
import { apiActivityOptions } from '../../../workflows/activity-options.ts';
import { DEFAULT_DELIVERY_SCHEDULE_MS, nextAttemptDelay } from '../../../workflows/webhook-delivery.ts';
import { sendError, startTestServer, type TestServer } from './server.ts';

const ABSURD = ['1000000000', 'Fri, 31 Dec 9999 23:59:59 GMT'];
let server: TestServer;
let retryAfter = ABSURD[0]!;

beforeAll(async () => {
  server = await startTestServer((req, res) => {
    const status = req.url.startsWith('/download') ? 503 : 429;
    sendError(res, status, status === 429 ? 'rate_limited' : 'unavailable', 'later', {
      headers: { 'retry-after': retryAfter },
    });
  });
});
afterAll(async () => {
  await server.close();
});

const client = () => new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_cap', retry: false, timeoutMs: 5000 });

describe('Retry-After cap', () => {
  it('is one minute, and the API activities back off no longer than that either', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
    expect(apiActivityOptions('q').retry?.maximumInterval).toBe(MAX_RETRY_AFTER_MS);
  });

  it.each(ABSURD)('an API call answered 429 with Retry-After %s asks Temporal for at most the cap', async (value) => {
    retryAfter = value;
    const c = client();
    const err = await c.enrichCompany({ domain: 'acme.com' }).catch((e: unknown) => e);
    await c.close();
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    const failure = toActivityFailure(err) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.nextRetryDelay).toBe(MAX_RETRY_AFTER_MS);
  });

  it('caps an error that carries a larger delay than any parser would give', () => {
    const err = new RateLimitedError({ status: 429, code: 'rate_limited', message: 'x', retryAfterMs: 1e15 });
    expect((toActivityFailure(err) as ApplicationFailure).nextRetryDelay).toBe(MAX_RETRY_AFTER_MS);
  });

  it.each(ABSURD)('a download answered 503 with Retry-After %s reports at most the cap', async (value) => {
    retryAfter = value;
    const c = client();
    const err = await c.downloadIntentExport(`${server.url}/download/x.jsonl`).catch((e: unknown) => e);
    await c.close();
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
  });

  it('parses absurd values to the cap, and keeps small ones as they are', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    for (const value of ABSURD) {
      expect(parseRetryAfter(value, now)).toBe(MAX_RETRY_AFTER_MS);
    }
    expect(parseRetryAfter('7', now)).toBe(7_000);
  });

  it('a webhook destination asking for years stretches the delivery schedule by at most the cap per attempt', () => {
    const scheduled = DEFAULT_DELIVERY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    const honoured = DEFAULT_DELIVERY_SCHEDULE_MS.reduce((sum, d) => sum + nextAttemptDelay(d, 1e15, 1e15), 0);
    expect(honoured).toBeLessThanOrEqual(scheduled + DEFAULT_DELIVERY_SCHEDULE_MS.length * MAX_RETRY_AFTER_MS);
    expect(nextAttemptDelay(0, 30_000)).toBe(30_000); // a short Retry-After is still honoured
  });
});
