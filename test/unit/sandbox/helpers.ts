/** Helpers for the sandbox's own tests: plain fetch, no kit client. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../../sandbox/index.ts';

export const KEY_1 = 'sk_test_1';
export const KEY_2 = 'sk_test_2';
export const ACCOUNT = 'acct_default';
/** A fixed "now" for deterministic data: 2026-03-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 2, 1);

export interface Clock {
  (): number;
  now: number;
  advance(ms: number): void;
}

export function movableClock(start = T0): Clock {
  const fn = (() => fn.now) as Clock;
  fn.now = start;
  fn.advance = (ms) => {
    fn.now += ms;
  };
  return fn;
}

export function start(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ seed: 11, rateLimitPerMinute: 0, clock: () => T0, ...options });
}

/** Returns a `start` whose sandboxes are all stopped after each test of the calling file. */
export function startStoppedAfterEach(): (options?: SandboxOptions) => Promise<Sandbox> {
  const running: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((sb) => sb.stop()));
  });
  return async (options) => {
    const sb = await start(options);
    running.push(sb);
    return sb;
  };
}

/** Test replies are loosely typed JSON. */
// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON in tests
export type Json = any;

export interface Reply<T = Json> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

/** One call with the API key (or none), JSON in and out; `body` given as a string is sent as is. */
export async function call<T = Json>(
  sb: { url: string },
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== null) headers['x-api-key'] = options.key ?? KEY_1;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as T };
}

export const charged = (r: Reply): number => Number(r.headers.get('x-credits-charged'));

/** Domains that resolve to a company with at least `minSignals` visible signals (found by bulk enrich). */
export async function knownDomains(sb: Sandbox, count: number, minSignals = 1): Promise<string[]> {
  const found: string[] = [];
  for (let batch = 0; batch < 20 && found.length < count; batch++) {
    const domains = Array.from({ length: 100 }, (_, i) => `probe-${batch}-${i}.com`);
    const r = await call(sb, 'POST', '/v1/companies/enrich/bulk', { domains, limit: 1 });
    for (const x of r.json.results) {
      if (x.status === 'ok' && x.coverage.total_before_filters >= minSignals) found.push(x.domain);
    }
  }
  return found.slice(0, count);
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status to answer the n-th request (0-based). */
  answer: (n: number) => number;
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function receiver(): Promise<Receiver> {
  const received: Received[] = [];
  const r: Receiver = {
    url: '',
    received,
    answer: () => 200,
    async waitFor(n, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} requests, got ${received.length}`);
        await new Promise((res) => setTimeout(res, 5));
      }
      return received;
    },
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = r.answer(received.length);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}
