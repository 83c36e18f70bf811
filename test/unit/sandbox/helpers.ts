/** Helpers for the sandbox's own tests: plain fetch, no kit client. */
import type { IncomingHttpHeaders } from 'node:http';
import { afterEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../../sandbox/index.ts';
import { type Recorder, startRecorder } from '../../helpers/http-endpoint.ts';
import { parseJsonOr } from '../../helpers/parse-json.ts';

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
  return { status: res.status, headers: res.headers, text, json: parseJsonOr(text, undefined) as T };
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

export interface Receiver extends Recorder<Received> {
  received: Received[];
}

export async function receiver(): Promise<Receiver> {
  const options = { what: 'requests', waitTimeoutMs: 5_000, pollMs: 5 };
  const r = await startRecorder<Received>('/hook', options, (req, body, status) => ({
    headers: req.headers,
    body,
    status,
  }));
  return Object.assign(r, { received: r.items });
}
