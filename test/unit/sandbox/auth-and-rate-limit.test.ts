import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../sandbox/rate-limit.ts';
import { ACCOUNT, call, charged, KEY_1, KEY_2, startStoppedAfterEach } from './helpers.ts';

const start = startStoppedAfterEach();

describe('authentication', () => {
  it('accepts X-API-KEY in any case and Authorization: Bearer', async () => {
    const sb = await start();
    const forms: Record<string, string>[] = [
      { 'X-API-KEY': KEY_1 },
      { 'x-api-key': KEY_2 },
      { 'X-Api-Key': KEY_1 },
      { Authorization: `Bearer ${KEY_2}` },
      { authorization: `bearer ${KEY_1}` },
    ];
    for (const headers of forms) {
      const r = await call(sb, 'GET', '/v1/stats', undefined, { key: null, headers });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]+$/);
      expect(r.headers.get('x-credits-charged')).toBe('0');
      expect(Number(r.headers.get('x-credits-remaining'))).toBe(sb.ledger.balance(ACCOUNT));
    }
  });

  it('answers 401 for a missing or unknown key, with the common headers and no charge', async () => {
    const sb = await start();
    for (const options of [{ key: null }, { key: 'sk_nope' }, { key: null, headers: { authorization: 'Basic abc' } }]) {
      const r = await call(sb, 'POST', '/v1/companies/enrich', { domain: 'acme.com' }, options);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
      expect(r.json.error.request_id).toBe(r.headers.get('x-request-id'));
      expect(charged(r)).toBe(0);
      expect(r.headers.get('x-credits-remaining')).toBeNull();
    }
    expect(sb.ledger.total()).toBe(0);
  });

  it('keeps accounts apart: each key charges its own account', async () => {
    const sb = await start({
      accounts: [
        { id: 'a', keys: ['ka'], credits: 100 },
        { id: 'b', keys: ['kb1', 'kb2'], credits: 100 },
      ],
    });
    const r = await call(sb, 'POST', '/v1/emails/verify', { email: 'jane.doe@acme.com' }, { key: 'kb2' });
    expect(r.status).toBe(200);
    expect(sb.ledger.total('a')).toBe(0);
    expect(sb.ledger.total('b')).toBe(charged(r));
    expect(sb.accounts.get('b')?.balance).toBe(100 - charged(r));
  });
});

describe('rate limit', () => {
  it('is shared by the keys of one account: past it, 429 with Retry-After; rejected calls do not count', async () => {
    const sb = await start({ rateLimitPerMinute: 4 });
    const keys = [KEY_1, KEY_2, KEY_1, KEY_2];
    for (const key of keys) expect((await call(sb, 'GET', '/v1/stats', undefined, { key })).status).toBe(200);
    for (const key of [KEY_1, KEY_2]) {
      const r = await call(sb, 'GET', '/v1/stats', undefined, { key });
      expect(r.status).toBe(429);
      expect(r.json.error.code).toBe('rate_limited');
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(59);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(charged(r)).toBe(0);
    }
    // 401s are not counted and not limited
    expect((await call(sb, 'GET', '/v1/stats', undefined, { key: 'sk_other' })).status).toBe(401);
  });

  it('frees a slot when the oldest call leaves the sliding window', async () => {
    // Both keys share the account's slots (through the server) ...
    const sb = await start({ rateLimitPerMinute: 2, rateLimitWindowMs: 60_000 });
    expect((await call(sb, 'GET', '/v1/stats')).status).toBe(200);
    expect((await call(sb, 'GET', '/v1/stats', undefined, { key: KEY_2 })).status).toBe(200);
    const limited = await call(sb, 'GET', '/v1/stats');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    // ... and a slot frees exactly when the oldest call leaves the window (time driven, not slept).
    let now = 0;
    const rl = new RateLimiter(2, 400, () => now);
    expect(rl.take('a').ok).toBe(true);
    now = 100;
    expect(rl.take('a').ok).toBe(true);
    now = 399;
    expect(rl.take('a').ok).toBe(false);
    now = 400;
    expect(rl.take('a').ok).toBe(true);
    now = 499;
    expect(rl.take('a').ok).toBe(false);
    now = 500;
    expect(rl.take('a').ok).toBe(true);
  });

  it('computes Retry-After from the oldest call in the window', () => {
    let now = 0;
    const rl = new RateLimiter(3, 60_000, () => now);
    expect(rl.take('a')).toEqual({ ok: true, remaining: 2 });
    now = 10_000;
    rl.take('a');
    now = 20_000;
    rl.take('a');
    now = 30_000;
    expect(rl.take('a')).toEqual({ ok: false, retryAfterMs: 30_000 });
    expect(rl.take('b').ok).toBe(true);
    now = 60_000;
    expect(rl.take('a').ok).toBe(true);
    expect(rl.take('a')).toEqual({ ok: false, retryAfterMs: 10_000 });
    expect(new RateLimiter(0).take('a').ok).toBe(true);
  });
});
