/**
 * One account, two keys, one rate limit: together they cannot exceed it. The sandbox answers 429 with
 * Retry-After; with retries on, the client waits that long and then succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../connectors/signal-api/index.ts';
import { client, KEY_1, KEY_2, type Sandbox, sandbox, settle } from './helpers.ts';

const LIMIT = 6;
/** A shortened window (sandbox option) keeps the wait for Retry-After to a few seconds. */
const WINDOW_MS = 4_000;
let sb: Sandbox;

beforeAll(async () => {
  sb = await sandbox({ rateLimitPerMinute: LIMIT, rateLimitWindowMs: WINDOW_MS });
});

afterAll(async () => {
  await sb?.stop();
});

describe('account rate limit across keys', () => {
  it('two keys share the budget: the next call is 429, and a retrying client waits Retry-After', async () => {
    const a = client(sb, { apiKey: KEY_1, retry: false });
    const b = client(sb, { apiKey: KEY_2, retry: false, auth: 'bearer' });
    const started = Date.now();
    for (let i = 0; i < LIMIT / 2; i++) {
      await a.getStats();
      await b.listSignalTypes();
    }
    const errA = await settle(a.getStats());
    const errB = await settle(b.getStats());
    for (const err of [errA, errB]) {
      expect(err).toBeInstanceOf(RateLimitedError);
      const r = err as RateLimitedError;
      expect([r.status, r.code]).toEqual([429, 'rate_limited']);
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
      expect(r.retryAfterMs! % 1000).toBe(0); // whole seconds, rounded up
      expect(r.requestId).toMatch(/^req_/);
    }

    // With retries on, the client honours Retry-After (a slot frees one window after the first call).
    const patient = client(sb, { apiKey: KEY_2, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } });
    const stats = await patient.getStats();
    expect(stats.credits).toBe(0);
    expect(patient.retries.length).toBeGreaterThanOrEqual(1);
    const waited = patient.retries[0]!;
    expect(waited.error).toBeInstanceOf(RateLimitedError);
    expect(waited.delayMs).toBe((waited.error as RateLimitedError).retryAfterMs);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS - 100);
    await Promise.all([a.close(), b.close(), patient.close()]);
  }, 30_000);
});
