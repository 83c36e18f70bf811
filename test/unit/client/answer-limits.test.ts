/**
 * Answers past the spec's limits are refused, naming the field, instead of being used: more signals for one company
 * than the `limit` asked (or the spec's 500), and an `x-credits-charged` that is not a count of credits.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalClient, UnexpectedResponseError } from '../../../connectors/signal-api/index.ts';
import { thrownBy } from '../../helpers/thrown-by.ts';
import { type RecordedRequest, sendJson, signalBody, startTestServer, type TestServer } from './server.ts';

let server: TestServer;
let answer: (req: RecordedRequest, res: ServerResponse) => void = () => {};

beforeAll(async () => {
  server = await startTestServer((req, res) => answer(req, res));
});
afterAll(async () => {
  await server.close();
});

const signals = (n: number) => Array.from({ length: n }, (_, i) => signalBody(`sig_${i}`));

/** A bulk answer: one ok result per domain asked, each with `perDomain` signals. */
function bulkAnswer(perDomain: (domain: string) => number, headers: Record<string, string> = {}) {
  return (req: RecordedRequest, res: ServerResponse) => {
    const { domains } = req.json as { domains: string[] };
    const results = domains.map((domain) => ({
      domain,
      status: 'ok',
      company: { name: domain, domain },
      signals: signals(perDomain(domain)),
    }));
    sendJson(res, 200, { results }, { 'x-credits-charged': '2', ...headers });
  };
}

async function refusal(run: (client: SignalClient) => Promise<unknown>): Promise<UnexpectedResponseError> {
  const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_limits', retry: false });
  return (await thrownBy(client, run, 'expected the answer to be refused')) as UnexpectedResponseError;
}

describe('answers past the spec’s limits are refused, naming the field', () => {
  it('more signals for one domain than the limit asked', async () => {
    answer = bulkAnswer((domain) => (domain === 'b.com' ? 6 : 5));
    const error = await refusal((c) => c.enrichCompanies({ domains: ['a.com', 'b.com'], limit: 5 }));
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.field).toBe('results[1].signals');
    expect(error.message).toMatch(/results\[1\]\.signals: 6 signals .*limit of 5.*b\.com/);
    expect(error.retryable).toBe(false);
  });

  it('more than 500 signals for one domain when no limit was asked', async () => {
    answer = bulkAnswer(() => 501);
    const error = await refusal((c) => c.enrichCompanies({ domains: ['a.com'] }));
    expect(error.field).toBe('results[0].signals');
    expect(error.message).toMatch(/501 signals .*500/);
  });

  it('exactly the limit is accepted', async () => {
    answer = bulkAnswer(() => 500);
    const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_limits', retry: false });
    const result = await client.enrichCompanies({ domains: ['a.com'] }).finally(() => client.close());
    expect(result.results[0]?.status === 'ok' && result.results[0].signals).toHaveLength(500);
  });

  it('more signals than the limit in a one-company answer', async () => {
    answer = (_req, res) =>
      sendJson(
        res,
        200,
        { company: { name: 'A', domain: 'a.com' }, signals: signals(3) },
        { 'x-credits-charged': '6' },
      );
    const error = await refusal((c) => c.enrichCompany({ domain: 'a.com', limit: 2 }));
    expect(error.field).toBe('signals');
  });

  it.each(['-4', 'abc', '1e999', ''])('x-credits-charged %j on a 2xx answer', async (charged) => {
    answer = bulkAnswer(() => 1, { 'x-credits-charged': charged });
    const error = await refusal((c) => c.enrichCompanies({ domains: ['a.com'] }));
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.field).toBe('x-credits-charged');
    expect(error.message).toContain('x-credits-charged');
    expect(error.creditsCharged).toBeUndefined();
  });
});
