/**
 * Contract-test helpers: a sandbox per test file, clients on its two default keys, a movable clock and a local
 * HTTP receiver for webhook deliveries.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RetryEvent, SignalClient, type SignalClientOptions } from '../../connectors/signal-api/index.ts';
import { startSandbox } from '../../sandbox/index.ts';

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

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Answer status for the n-th delivery (0-based); default 200. */
  answer: (n: number) => number;
  waitFor(count: number, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

/** A local endpoint that records webhook deliveries. */
export async function receiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let seen = 0;
  const r: Receiver = {
    url: '',
    deliveries,
    answer: () => 200,
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} deliveries, got ${deliveries.length}`);
        await new Promise((res) => setTimeout(res, 10));
      }
      return deliveries;
    },
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = r.answer(seen++);
      if (status >= 200 && status < 300) {
        deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      }
      res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
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
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
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
