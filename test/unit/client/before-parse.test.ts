/**
 * `beforeParse`: a worker that paces its calls lets a call that is about due leave before it parses a large answer
 * (workers/rate-limiter-permits.ts), so the client must wait for the hook before parsing one, and not bother for small ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import { enrichBody, sendJson, signalBody, startTestServer, type TestServer } from './server.ts';

const LARGE_SIGNALS = 200;
let server: TestServer;
let client: SignalClient;
let large = true;
let hookCalls = 0;
let onHook: () => void = () => {};
let release: () => void = () => {};

beforeAll(async () => {
  server = await startTestServer((_req, res) => {
    const signals = Array.from({ length: large ? LARGE_SIGNALS : 1 }, (_, i) =>
      signalBody(`sig_${i}`, { signal_name: `Signal ${i}`, data: { summary: 'x'.repeat(500) } }),
    );
    sendJson(res, 200, enrichBody({ signals, signal_summary: { news: signals.length } }), { 'x-credits-charged': '2' });
  });
  client = new SignalClient({
    baseUrl: server.url,
    apiKey: 'sk_test_before_parse',
    retry: false,
    beforeParse: () => {
      hookCalls += 1;
      onHook();
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('beforeParse', () => {
  it('holds a large answer until the hook resolves, then parses it whole', async () => {
    large = true;
    const hooked = new Promise<void>((resolve) => {
      onHook = resolve;
    });
    const call = client.enrichCompany({ domain: 'acme.com' });
    await hooked;
    const state = await Promise.race([call.then(() => 'answered'), Promise.resolve('waiting')]);
    expect(state).toBe('waiting');
    release();
    const result = await call;
    expect(result.signals).toHaveLength(LARGE_SIGNALS);
    expect(hookCalls).toBe(1);
  });

  it('parses a small answer without asking', async () => {
    large = false;
    const before = hookCalls;
    const result = await client.enrichCompany({ domain: 'acme.com' });
    expect(result.signals).toHaveLength(1);
    expect(hookCalls).toBe(before);
  });
});
