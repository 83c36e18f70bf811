import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_BULK_ENRICH_DOMAINS,
  MAX_BULK_VERIFY_EMAILS,
  MAX_SIGNAL_SUBTYPES,
  MAX_SIGNALS_PER_CALL,
  SignalClient,
  ValidationError,
} from '../../../connectors/signal-api/index.ts';
import { startTestServer, type TestServer } from './server.ts';

let server: TestServer;
let client: SignalClient;

beforeAll(async () => {
  server = await startTestServer((_req, res) => {
    res.writeHead(500);
    res.end();
  });
  client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_limits', retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

async function rejected(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('limits are checked before anything is sent', () => {
  const cases: [string, () => Promise<unknown>, string, RegExp][] = [
    [
      'more than 100 domains',
      () => client.enrichCompanies({ domains: range(MAX_BULK_ENRICH_DOMAINS + 1, (i) => `d${i}.com`) }),
      'domains',
      /domains: at most 100 domains per request \(got 101\)/,
    ],
    ['no domains', () => client.enrichCompanies({ domains: [] }), 'domains', /at least one domain/],
    [
      'more than 1000 emails',
      () => client.verifyEmails({ emails: range(MAX_BULK_VERIFY_EMAILS + 1, (i) => `u${i}@x.com`) }),
      'emails',
      /emails: at most 1000 emails per request \(got 1001\)/,
    ],
    [
      'more than 25 subtypes',
      () =>
        client.enrichCompany({ domain: 'acme.com', signal_subtypes: range(MAX_SIGNAL_SUBTYPES + 1, (i) => `s${i}`) }),
      'signal_subtypes',
      /signal_subtypes: at most 25 entries \(got 26\)/,
    ],
    [
      'more than 25 subtypes in bulk',
      () => client.enrichCompanies({ domains: ['a.com'], signal_subtypes: range(26, (i) => `s${i}`) }),
      'signal_subtypes',
      /at most 25/,
    ],
    [
      'limit over 500',
      () => client.enrichCompany({ domain: 'acme.com', limit: MAX_SIGNALS_PER_CALL + 1 }),
      'limit',
      /limit: at most 500 signals per call \(got 501\)/,
    ],
    ['limit over 500 (bulk)', () => client.enrichCompanies({ domains: ['a.com'], limit: 501 }), 'limit', /500/],
    ['limit over 500 (contact)', () => client.enrichContact({ contact_email: 'a@b.co', limit: 501 }), 'limit', /500/],
    ['limit not an integer', () => client.enrichCompany({ domain: 'acme.com', limit: 2.5 }), 'limit', /integer/],
    [
      'no company identifier',
      () => client.enrichCompany({ limit: 10 }),
      'domain',
      /no identifier given: one of domain, company_name or linkedin_url is required/,
    ],
    [
      'no contact identifier',
      () => client.enrichContact({}),
      'contact_email',
      /one of contact_email or contact_linkedin_url is required/,
    ],
    ['empty email', () => client.verifyEmail({ email: '' }), 'email', /non-empty/],
    [
      'topic id not b2b_<number>',
      () => client.buyerIntentContacts({ topic_ids: ['b2b_1', 'b2b_x'] }),
      'topic_ids[1]',
      /"b2b_x" is not a topic id of the form b2b_<number>/,
    ],
    ['no topic ids', () => client.buyerIntentContacts({ topic_ids: [] }), 'topic_ids', /at least one topic id/],
    ['export topic id', () => client.createIntentExport({ topic_ids: ['topic_5'] }), 'topic_ids[0]', /b2b_<number>/],
    [
      'detected_after not a date',
      () => client.enrichCompany({ domain: 'a.com', detected_after: 'soon' }),
      'detected_after',
      /ISO 8601/,
    ],
    [
      'domains of the wrong type',
      () => client.enrichCompanies({ domains: 'acme.com' as unknown as string[] }),
      'domains',
      /array/,
    ],
    ['empty signal id', () => client.getSignal(''), 'signal_id', /non-empty/],
  ];

  for (const [name, call, field, message] of cases) {
    it(name, async () => {
      const before = server.requests.length;
      const err = await rejected(call());
      expect(err.field).toBe(field);
      expect(err.message).toMatch(message);
      expect(err.status).toBe(0);
      expect(err.code).toBe('validation_error');
      expect(err.retryable).toBe(false);
      expect(server.requests.length).toBe(before);
    });
  }

  it('accepts the limits themselves', async () => {
    // exactly at the limit passes validation and reaches the server (which answers 500 here)
    const calls = [
      client.enrichCompanies({
        domains: range(100, (i) => `d${i}.com`),
        limit: 500,
        signal_subtypes: range(25, String),
      }),
      client.verifyEmails({ emails: range(1000, (i) => `u${i}@x.com`) }),
      client.buyerIntentContacts({ topic_ids: ['b2b_38000'] }),
    ];
    const before = server.requests.length;
    const results = await Promise.allSettled(calls);
    expect(results.every((r) => r.status === 'rejected' && (r.reason as Error).name === 'ServerError')).toBe(true);
    expect(server.requests.length).toBe(before + 3);
  });
});
