import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../connectors/signal-api/http.ts';
import {
  AuthenticationError,
  InsufficientCreditsError,
  MAX_RETRY_AFTER_MS,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  type RetryEvent,
  ServerError,
  SignalClient,
  ValidationError,
} from '../../../connectors/signal-api/index.ts';
import { enrichBody, type RecordedRequest, sendError, sendJson, startTestServer, type TestServer } from './server.ts';

type Step = (res: ServerResponse, req: RecordedRequest) => void;

const ok: Step = (res) => sendJson(res, 200, enrichBody(), { 'x-credits-charged': '2' });
const fail =
  (status: number, code: string, headers: Record<string, string> = {}): Step =>
  (res) =>
    sendError(res, status, code, code, { headers });
const reset: Step = (res) => res.socket?.destroy();
const malformed: Step = (res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"company": {"na');
};
const html502: Step = (res) => {
  res.writeHead(502, { 'content-type': 'text/html' });
  res.end('<html><title>502 Bad Gateway</title></html>');
};

let server: TestServer;
let script: Step[] = [];
let times: number[] = [];
let events: RetryEvent[] = [];

beforeAll(async () => {
  server = await startTestServer((req, res) => {
    times.push(Date.now());
    const step = script.shift() ?? ok;
    step(res, req);
  });
});

beforeEach(() => {
  script = [];
  times = [];
  events = [];
  server.requests.length = 0;
});

afterAll(async () => {
  await server.close();
});

/** Enriches one domain against `step` and expects it to fail with `Cls` after a single request. */
async function expectOneFailedAttempt(
  client: SignalClient,
  step: Step,
  Cls: new (...a: never[]) => Error,
): Promise<void> {
  script = [step];
  const err = await settle(client.enrichCompany({ domain: 'acme.com' }));
  expect(err).toBeInstanceOf(Cls);
  expect(server.requests).toHaveLength(1);
}

function makeClient(
  retry: ConstructorParameters<typeof SignalClient>[0]['retry'] = { baseDelayMs: 5, maxDelayMs: 20 },
) {
  return new SignalClient({
    baseUrl: server.url,
    apiKey: 'sk_test_retry',
    retry,
    timeoutMs: 2000,
    onRetry: (e) => events.push(e),
  });
}

async function settle<T>(p: Promise<T>): Promise<T | Error> {
  return p.catch((e: Error) => e);
}

describe('retries on', () => {
  const cases: [string, Step][] = [
    ['500', fail(500, 'internal_error')],
    ['503', fail(503, 'unavailable')],
    ['HTML 502', html502],
    ['429 without Retry-After', fail(429, 'rate_limited')],
    ['connection reset', reset],
    ['cut-off JSON body', malformed],
  ];
  for (const [name, step] of cases) {
    it(`survives ${name}`, async () => {
      const client = makeClient();
      script = [step, step];
      const r = await client.enrichCompany({ domain: 'acme.com' });
      expect(r.credits).toBe(2);
      expect(server.requests).toHaveLength(3);
      expect(events.map((e) => e.attempt)).toEqual([1, 2]);
      expect(events.every((e) => e.delayMs >= 0 && e.delayMs <= 20)).toBe(true);
      await client.close();
    });
  }

  it('waits Retry-After (seconds) before the next attempt', async () => {
    const client = makeClient();
    script = [fail(429, 'rate_limited', { 'retry-after': '1' })];
    await client.enrichCompany({ domain: 'acme.com' });
    expect(events[0]?.delayMs).toBe(1000);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(950);
    await client.close();
  });

  it('waits Retry-After given as an HTTP date', async () => {
    const client = makeClient();
    script = [fail(503, 'unavailable', { 'retry-after': new Date(Date.now() + 2000).toUTCString() })];
    await client.enrichCompany({ domain: 'acme.com' });
    expect(events[0]?.delayMs).toBeGreaterThan(900);
    expect(events[0]?.delayMs).toBeLessThanOrEqual(2000);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual((events[0]?.delayMs ?? 0) - 50);
    await client.close();
  });

  it('gives up after maxAttempts with the last typed error', async () => {
    const client = makeClient({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 });
    script = [fail(500, 'internal_error'), fail(502, 'bad_gateway'), fail(503, 'unavailable'), ok];
    const err = await settle(client.enrichCompany({ domain: 'acme.com' }));
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe('unavailable');
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  it('does not wait a Retry-After longer than maxRetryAfterMs', async () => {
    const client = makeClient({ maxRetryAfterMs: 5000 });
    script = [fail(429, 'rate_limited', { 'retry-after': '3600' })];
    const err = await settle(client.enrichCompany({ domain: 'acme.com' }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(MAX_RETRY_AFTER_MS); // an hour asked, the cap reported
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it('never retries 400/401/402/403/404/422', async () => {
    const client = makeClient();
    const cases: [Step, new (...a: never[]) => Error][] = [
      [fail(400, 'invalid_json'), ValidationError],
      [fail(401, 'unauthorized'), AuthenticationError],
      [fail(402, 'insufficient_credits'), InsufficientCreditsError],
      [fail(403, 'forbidden'), AuthenticationError],
      [fail(404, 'not_found'), NotFoundError],
      [fail(422, 'validation_error'), ValidationError],
    ];
    for (const [step, Cls] of cases) {
      server.requests.length = 0;
      await expectOneFailedAttempt(client, step, Cls);
    }
    expect(events).toHaveLength(0);
    await client.close();
  });

  it('retries a call that creates something only on 429, never on an ambiguous failure', async () => {
    const client = makeClient();
    const exportJob = (res: ServerResponse) =>
      sendJson(res, 202, { export_id: 'exp_1', status: 'queued', created_at: '2026-03-01T12:00:00Z' });
    script = [fail(500, 'internal_error')];
    expect(await settle(client.createIntentExport({ topic_ids: ['b2b_1'] }))).toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(1);
    script = [reset];
    expect(await settle(client.createIntentExport({ topic_ids: ['b2b_1'] }))).toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(2);
    script = [fail(429, 'rate_limited'), exportJob];
    const job = await client.createIntentExport({ topic_ids: ['b2b_1'] });
    expect(job.export_id).toBe('exp_1');
    expect(server.requests).toHaveLength(4);
    await client.close();
  });

  it('retries a refused connection even for a call that creates something', async () => {
    const dead = await startTestServer(() => {});
    const url = dead.url;
    await dead.close();
    const client = new SignalClient({
      baseUrl: url,
      apiKey: 'sk_x',
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      onRetry: (e) => events.push(e),
    });
    const err = await settle(client.createWebhook({ url: 'http://127.0.0.1:1/hook', signal_types: ['news'] }));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('connection_refused');
    expect((err as NetworkError).notSent).toBe(true);
    expect(events).toHaveLength(2);
    await client.close();
  });
});

describe('retries off', () => {
  const cases: [string, Step, new (...a: never[]) => Error][] = [
    ['500', fail(500, 'internal_error'), ServerError],
    ['HTML 502', html502, ServerError],
    ['429', fail(429, 'rate_limited', { 'retry-after': '1' }), RateLimitedError],
    ['reset', reset, NetworkError],
    ['cut-off JSON', malformed, NetworkError],
  ];
  for (const [name, step, Cls] of cases) {
    it(`surfaces ${name} as ${Cls.name} after one attempt`, async () => {
      const client = makeClient(false);
      await expectOneFailedAttempt(client, step, Cls);
      expect(events).toHaveLength(0);
      await client.close();
    });
  }

  it('a per-call option overrides the client policy both ways', async () => {
    const on = makeClient();
    script = [fail(500, 'internal_error')];
    expect(await settle(on.enrichCompany({ domain: 'acme.com' }, { retry: false }))).toBeInstanceOf(ServerError);
    await on.close();
    const off = makeClient(false);
    script = [fail(500, 'internal_error')];
    const r = await off.enrichCompany({ domain: 'acme.com' }, { retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    expect(r.company.domain).toBe('acme.com');
    await off.close();
  });
});

describe('timeouts and aborts', () => {
  it('a slow answer is a NetworkError timeout; retried, the next attempt succeeds', async () => {
    // The slow answer comes only once the client has given up on it (not after a time it might outlast on a loaded
    // machine); the timeout leaves the answer that is not held a whole second.
    const held: (() => void)[] = [];
    const slow: Step = (res) => {
      held.push(() => ok(res, undefined as never));
    };
    const answerHeld = () => {
      for (const answer of held.splice(0)) answer();
    };
    const off = new SignalClient({ baseUrl: server.url, apiKey: 'k_timeout', retry: false, timeoutMs: 1000 });
    script = [slow];
    const err = await settle(off.enrichCompany({ domain: 'acme.com' }));
    answerHeld();
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('timeout');
    expect((err as NetworkError).message).toMatch(/within 1000 ms/);
    await off.close();

    const on = new SignalClient({
      baseUrl: server.url,
      apiKey: 'k_timeout',
      timeoutMs: 1000,
      retry: { baseDelayMs: 1 },
    });
    script = [slow];
    const answered = await on.enrichCompany({ domain: 'acme.com' });
    answerHeld();
    expect(answered.credits).toBe(2);
    expect(server.requests).toHaveLength(3);
    await on.close();
  });

  it('an abort during a retry wait rejects with the abort reason and sends nothing more', async () => {
    const ac = new AbortController();
    // Aborted once the 5 s wait the 429 asked for has begun (the client announces each retry wait), not at a time.
    const client = new SignalClient({
      baseUrl: server.url,
      apiKey: 'sk_test_retry',
      timeoutMs: 2000,
      onRetry: () => setImmediate(() => ac.abort(new Error('stop now'))),
    });
    script = [fail(429, 'rate_limited', { 'retry-after': '5' })];
    const err = await settle(client.enrichCompany({ domain: 'acme.com' }, { signal: ac.signal }));
    expect((err as Error).message).toBe('stop now');
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

describe('backoff', () => {
  it('full jitter within the exponential cap', () => {
    const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, () => 0.999)).toBe(399);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(4, policy, () => 0)).toBe(0);
  });
});
