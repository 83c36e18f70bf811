/**
 * Contract-test helpers: a sandbox per test file, clients on its two default keys, a movable clock and a local
 * HTTP receiver for webhook deliveries.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { type RetryEvent, SignalClient, type SignalClientOptions } from '../../connectors/signal-api/index.ts';
import { startSandbox } from '../../sandbox/index.ts';
import { type Recorder, startRecorder } from '../helpers/http-endpoint.ts';
import { parseJsonOr } from '../helpers/parse-json.ts';

export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
export type SandboxOptions = NonNullable<Parameters<typeof startSandbox>[0]>;

/** The README's default account and its two keys. */
export const ACCOUNT = 'acct_default';
export const KEY_1 = 'sk_test_1';
export const KEY_2 = 'sk_test_2';

/** 2026-03-01T00:00:00Z: far enough from epoch for signal timelines, fixed for determinism. */
export const T0 = Date.parse('2026-03-01T00:00:00Z');

export interface Clock {
  now: number;
  (): number;
  advance(ms: number): void;
}

export function movableClock(start = T0): Clock {
  const fn = (() => fn.now) as Clock;
  fn.now = start;
  fn.advance = (ms: number) => {
    fn.now += ms;
  };
  return fn;
}

/** A sandbox without the rate limit unless asked (tests make many calls quickly). */
export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ seed: 7, rateLimitPerMinute: 0, ...options });
}

export interface TestClient extends SignalClient {
  retries: RetryEvent[];
}

export function client(sb: Sandbox, options: Partial<SignalClientOptions> = {}): TestClient {
  const retries: RetryEvent[] = [];
  const c = new SignalClient({
    baseUrl: sb.url,
    apiKey: KEY_1,
    timeoutMs: 5_000,
    retry: { maxAttempts: 8, baseDelayMs: 5, maxDelayMs: 40 },
    onRetry: (e) => retries.push(e),
    ...options,
  }) as TestClient;
  c.retries = retries;
  return c;
}

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver extends Recorder<Delivery> {
  /** The 2xx-answered deliveries. */
  deliveries: Delivery[];
}

/** A local endpoint that records webhook deliveries. */
export async function receiver(): Promise<Receiver> {
  const options = { what: 'deliveries', waitTimeoutMs: 10_000, pollMs: 10 };
  const r = await startRecorder<Delivery>('/hooks', options, (req, body, status) =>
    status >= 200 && status < 300 ? { headers: req.headers, body, at: Date.now() } : undefined,
  );
  return Object.assign(r, { deliveries: r.items });
}

/** Raw JSON call, bypassing the client's checks. */
export async function raw(
  sb: Sandbox,
  method: string,
  path: string,
  body?: string,
  key = KEY_1,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, json: parseJsonOr(text, text), headers: res.headers };
}

/** Domains the sandbox resolves to a company and one it does not, found with one bulk call. */
export async function findDomains(
  c: SignalClient,
  n = 60,
): Promise<{ known: string[]; unknown: string[]; credits: number }> {
  const candidates = Array.from({ length: n }, (_, i) => `firm-${i}.com`);
  const r = await c.enrichCompanies({ domains: candidates, limit: 3 });
  return {
    known: r.results.filter((x) => x.status === 'ok').map((x) => x.domain),
    unknown: r.results.filter((x) => x.status === 'not_found').map((x) => x.domain),
    credits: r.credits,
  };
}

export async function settle<T>(p: Promise<T>): Promise<T | Error> {
  return p.catch((e: Error) => e);
}
