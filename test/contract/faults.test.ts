/**
 * Fault injection: each mode is survived with retries on, and surfaces as a typed error with retries off.
 * Faulted requests are never charged, so the credits the client saw still equal the ledger.
 */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NetworkError,
  RateLimitedError,
  ServerError,
  type SignalApiError,
  SignalApiError as SignalApiErrorClass,
} from '../../connectors/signal-api/index.ts';
import { ACCOUNT, client, findDomains, movableClock, type Sandbox, sandbox, T0, type TestClient } from './helpers.ts';

let sb: Sandbox;
let known: string[];
const clock = movableClock(T0);

beforeAll(async () => {
  sb = await sandbox({
    clock,
    exportTiming: { queuedMs: 1_000, runningMs: 1_000, linkTtlMs: 600_000, jobTtlMs: 3_600_000 },
  });
  const c = client(sb);
  known = (await findDomains(c)).known;
  await c.close();
});

afterAll(async () => {
  await sb?.stop();
});

/** Runs `n` paid enrich calls; returns results and errors, and checks the ledger against the credits seen. */
async function run(c: TestClient, n: number) {
  const before = sb.ledger.total(ACCOUNT);
  let credits = 0;
  const errors: SignalApiError[] = [];
  for (let i = 0; i < n; i++) {
    try {
      credits += (await c.enrichCompany({ domain: known[i % known.length]!, limit: 3 })).credits;
    } catch (err) {
      if (!(err instanceof SignalApiErrorClass)) throw err;
      errors.push(err);
    }
  }
  expect(sb.ledger.total(ACCOUNT) - before).toBe(credits);
  return { errors, credits };
}

const modes: { name: string; faults: Record<string, unknown>; error: new (...a: never[]) => Error; code?: RegExp }[] = [
  { name: 'errorRate (5xx, some HTML)', faults: { errorRate: 0.4 }, error: ServerError },
  {
    name: 'rateLimitBurst',
    faults: { rateLimitBurst: { every: 6, length: 2, retryAfterS: 1 } },
    error: RateLimitedError,
  },
  { name: 'resetRate', faults: { resetRate: 0.3 }, error: NetworkError, code: /connection_reset|network_error/ },
  {
    name: 'malformedJsonRate',
    faults: { malformedJsonRate: 0.3 },
    error: NetworkError,
    code: /malformed_body|connection_reset/,
  },
];

describe('fault modes on the JSON API', () => {
  for (const m of modes) {
    it(`${m.name}: survived with retries on`, async () => {
      sb.setFaults(m.faults);
      const c = client(sb, { retry: { maxAttempts: 10, baseDelayMs: 5, maxDelayMs: 40 } });
      const { errors } = await run(c, 12);
      expect(errors).toEqual([]);
      expect(c.retries.length).toBeGreaterThan(0);
      expect(c.retries.every((r) => r.error instanceof m.error)).toBe(true);
      if (m.name === 'rateLimitBurst') expect(c.retries.every((r) => r.delayMs === 1000)).toBe(true);
      sb.setFaults({});
      await c.close();
    }, 60_000);

    it(`${m.name}: a typed error with retries off`, async () => {
      sb.setFaults(m.faults);
      const c = client(sb, { retry: false });
      const { errors } = await run(c, 20);
      expect(errors.length).toBeGreaterThan(0);
      for (const e of errors) {
        expect(e).toBeInstanceOf(m.error);
        expect(e.retryable).toBe(true);
        if (m.code) expect(e.code).toMatch(m.code);
        if (e instanceof RateLimitedError) expect(e.retryAfterMs).toBe(1000);
        if (e instanceof ServerError) expect(e.message).toMatch(/failed with 5\d\d/);
      }
      expect(c.retries).toEqual([]);
      sb.setFaults({});
      await c.close();
    });
  }

  it('latencyMs: survived with a timeout above it; a NetworkError timeout below it', async () => {
    sb.setFaults({ latencyMs: 300 });
    const slowOk = client(sb, { timeoutMs: 3_000, retry: false });
    expect((await slowOk.getStats()).credits).toBe(0);
    const impatient = client(sb, { timeoutMs: 100, retry: false });
    const err = await impatient.getStats().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('timeout');
    sb.setFaults({});
    await Promise.all([slowOk.close(), impatient.close()]);
  });

  it('answerPaddingBytes: a very large answer, valid, charged and read as the same one unpadded', async () => {
    const c = client(sb, { timeoutMs: 10_000, retry: false });
    const domains = known.slice(0, 5);
    const plain = await c.enrichCompanies({ domains, limit: 2 });
    const path = '/v1/companies/enrich/bulk';
    sb.setFaults({ answerPaddingBytes: 2_000_000, answerPaddingPaths: [path], answerPaddingMax: 2 });
    const before = sb.ledger.total(ACCOUNT);
    const raw = await fetch(`${sb.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': sb.accounts.get(ACCOUNT)!.keys[0]!, 'content-type': 'application/json' },
      body: JSON.stringify({ domains, limit: 2 }),
    });
    const body = await raw.text();
    const padded = await c.enrichCompanies({ domains, limit: 2 });
    const after = await c.enrichCompanies({ domains, limit: 2 });
    sb.setFaults({});
    // About the size asked, valid JSON, the padding beside the answer's own fields.
    expect(raw.status).toBe(200);
    expect(body.length).toBeGreaterThanOrEqual(2_000_000);
    expect(body.length).toBeLessThan(2_100_000);
    expect(Object.keys(JSON.parse(body) as object)).toEqual(expect.arrayContaining(['sandbox_padding', 'results']));
    // Charged as usual, and nothing of the padding reaches the client's result.
    const rawCredits = Number(raw.headers.get('x-credits-charged'));
    expect(sb.ledger.total(ACCOUNT) - before).toBe(rawCredits + padded.credits + after.credits);
    expect(padded.results).toEqual(plain.results);
    expect(padded.credits).toBe(plain.credits);
    // Only `answerPaddingMax` answers are padded.
    const calls = sb.truth.calls({ path }).slice(-3);
    expect(calls.map((call) => call.fault)).toEqual(['padded', 'padded', null]);
    await c.close();
  });
});

describe('fault modes of email verification and exports', () => {
  it('verifyUpstreamFailureRate: failures listed as errors and not charged', async () => {
    sb.setFaults({ verifyUpstreamFailureRate: 0.5 });
    const c = client(sb, { retry: false });
    const before = sb.ledger.total(ACCOUNT);
    const r = await c.verifyEmails({ emails: Array.from({ length: 60 }, (_, i) => `p${i}@firm-${i}.com`) });
    const upstream = r.errors.filter((e) => e.code === 'upstream_failure');
    expect(upstream.length).toBeGreaterThan(0);
    expect(r.credits).toBe(r.verifications.filter((v) => v.result !== 'unknown').length);
    expect(sb.ledger.total(ACCOUNT) - before).toBe(r.credits);
    sb.setFaults({});
    await c.close();
  });

  async function readyExport(c: TestClient) {
    const job = await c.createIntentExport({ topic_ids: ['b2b_5'], limit: 200 });
    clock.advance(2_500);
    const ready = await c.getIntentExport(job.export_id);
    expect(ready.status).toBe('ready');
    return ready;
  }

  it('truncateDownloads: resumed with retries on; NetworkError with retries off', async () => {
    const c = client(sb, { retry: { maxAttempts: 10, baseDelayMs: 5, maxDelayMs: 20 } });
    const ready = await readyExport(c);
    const clean = await text((await c.downloadIntentExport(ready)).body);
    sb.setFaults({ truncateDownloads: 0.5 });
    for (let i = 0; i < 4; i++) expect(await text((await c.downloadIntentExport(ready)).body)).toBe(clean);
    sb.setFaults({ truncateDownloads: 1 });
    const off = client(sb, { retry: false });
    const d = await off.downloadIntentExport(ready);
    const err = await text(d.body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('truncated_body');
    sb.setFaults({});
    await Promise.all([c.close(), off.close()]);
  });

  it('downloadBytesPerSec: a throttled download still completes', async () => {
    const c = client(sb, { timeoutMs: 2_000 });
    const ready = await readyExport(c);
    const clean = await text((await c.downloadIntentExport(ready)).body);
    sb.setFaults({ downloadBytesPerSec: Math.max(2_000, Math.ceil(clean.length / 2)) });
    const started = Date.now();
    expect(await text((await c.downloadIntentExport(ready)).body)).toBe(clean);
    expect(Date.now() - started).toBeGreaterThan(500);
    sb.setFaults({});
    await c.close();
  });

  it('exportFailure: the job ends failed and the download says so', async () => {
    sb.setFaults({ exportFailure: true });
    const c = client(sb);
    const job = await c.createIntentExport({ topic_ids: ['b2b_6'] });
    clock.advance(5_000);
    const state = await c.getIntentExport(job.export_id);
    expect(state.status).toBe('failed');
    expect(state.error?.code).toBeTruthy();
    const err = await c.downloadIntentExport(job.export_id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignalApiErrorClass);
    expect((err as SignalApiError).code).toBe('export_failed');
    sb.setFaults({});
    await c.close();
  });
});
