/** An API answer is read up to a cap: a runaway answer is a NetworkError naming the cap and the path. */
import type { ServerResponse } from 'node:http';
import type { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, NetworkError, SignalClient } from '../../../connectors/signal-api/index.ts';
import { toActivityFailure } from '../../../workers/activity-failures.ts';
import { thrownBy } from '../../helpers/thrown-by.ts';
import { enrichBody, startTestServer, type TestServer } from './server.ts';

const CAP = 1024 * 1024;
let server: TestServer;
let answer: (res: ServerResponse) => void = () => {};

/** A JSON answer of about `bytes`, streamed in chunks without a Content-Length. */
function streamed(status: number, bytes: number) {
  return (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write('{"padding":"');
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    const more = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end('"}');
    };
    res.on('error', () => {});
    more();
  };
}

beforeAll(async () => {
  server = await startTestServer((_req, res) => answer(res));
});
afterAll(async () => {
  await server.close();
});

const client = (maxAnswerBytes?: number) =>
  new SignalClient({
    baseUrl: server.url,
    apiKey: 'sk_test_cap',
    retry: false,
    timeoutMs: 10_000,
    ...(maxAnswerBytes ? { maxAnswerBytes } : {}),
  });

async function failure(maxAnswerBytes?: number): Promise<NetworkError> {
  const call = (c: SignalClient) => c.enrichCompany({ domain: 'acme.com' });
  return (await thrownBy(client(maxAnswerBytes), call, 'expected the call to fail')) as NetworkError;
}

describe('answer size cap', () => {
  it('stops reading a 2xx answer that grows past the cap: NetworkError naming the cap and the path', async () => {
    answer = streamed(200, 8 * CAP);
    const err = await failure(CAP);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('answer_too_large');
    expect(err.message).toContain(String(CAP));
    expect(err.message).toContain('/v1/companies/enrich');
    // The same call would get the same answer: not retried, by the client or by Temporal.
    expect(err.retryable).toBe(false);
    expect((toActivityFailure(err) as ApplicationFailure).nonRetryable).toBe(true);
  });

  it('caps error bodies too', async () => {
    answer = streamed(500, 8 * CAP);
    const err = await failure(CAP);
    expect(err.code).toBe('answer_too_large');
  });

  it('refuses a declared Content-Length over the default cap (64 MiB) before reading the body', async () => {
    expect(MAX_ANSWER_BYTES).toBe(64 * 1024 * 1024);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) });
      res.write('{');
      res.on('error', () => {});
    };
    const err = await failure();
    expect(err.code).toBe('answer_too_large');
    expect(err.message).toContain(String(MAX_ANSWER_BYTES));
  });

  it('reads answers under the cap as before', async () => {
    answer = (res) => {
      const body = JSON.stringify(enrichBody());
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    };
    const c = client(CAP);
    const result = await c.enrichCompany({ domain: 'acme.com' });
    await c.close();
    expect(result.signals.length).toBeGreaterThan(0);
  });

  it('keeps a character whose bytes arrive in two chunks whole', async () => {
    const name = 'Acmé 株式会社';
    answer = (res) => {
      const bytes = Buffer.from(JSON.stringify(enrichBody({ company: { name, domain: 'acme.com' } })));
      const cut = bytes.indexOf(Buffer.from('株')) + 1; // inside the character's three bytes
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(bytes.subarray(0, cut));
      // The second half leaves after a pause, so the client reads it as a separate chunk.
      setTimeout(() => res.end(bytes.subarray(cut)), 50);
    };
    const c = client(CAP);
    const result = await c.enrichCompany({ domain: 'acme.com' });
    await c.close();
    expect(result.company?.name).toBe(name);
  });
});
