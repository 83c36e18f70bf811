/**
 * Bad input: every limit, malformed JSON, wrong types and unknown fields. The client refuses what it can check
 * before sending; the sandbox answers the rest with a clear 4xx, the client raises the typed error, and nothing is
 * charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../connectors/signal-api/index.ts';
import { ACCOUNT, client, raw, type Sandbox, sandbox, type TestClient } from './helpers.ts';

let sb: Sandbox;
let c: TestClient;

beforeAll(async () => {
  sb = await sandbox();
  c = client(sb, { retry: false });
});

afterAll(async () => {
  await c?.close();
  await sb?.stop();
});

const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

describe('limits: refused by the client before sending, and by the sandbox when sent anyway', () => {
  const cases: { name: string; call: () => Promise<unknown>; path: string; body: unknown; field: RegExp }[] = [
    {
      name: '101 domains',
      call: () => c.enrichCompanies({ domains: many(101, (i) => `d${i}.com`) }),
      path: '/v1/companies/enrich/bulk',
      body: { domains: many(101, (i) => `d${i}.com`) },
      field: /^domains/,
    },
    {
      name: '1001 emails',
      call: () => c.verifyEmails({ emails: many(1001, (i) => `u${i}@x.com`) }),
      path: '/v1/emails/verify/bulk',
      body: { emails: many(1001, (i) => `u${i}@x.com`) },
      field: /^emails/,
    },
    {
      name: '26 subtypes',
      call: () => c.enrichCompany({ domain: 'firm-1.com', signal_subtypes: many(26, (i) => `s${i}`) }),
      path: '/v1/companies/enrich',
      body: { domain: 'firm-1.com', signal_subtypes: many(26, (i) => `s${i}`) },
      field: /^signal_subtypes/,
    },
    {
      name: 'limit 501',
      call: () => c.enrichCompany({ domain: 'firm-1.com', limit: 501 }),
      path: '/v1/companies/enrich',
      body: { domain: 'firm-1.com', limit: 501 },
      field: /^limit/,
    },
    {
      name: 'no identifier',
      call: () => c.enrichCompany({ limit: 5 }),
      path: '/v1/companies/enrich',
      body: { limit: 5 },
      field: /domain|company_name|linkedin_url|identifier/,
    },
    {
      name: 'no contact identifier',
      call: () => c.enrichContact({}),
      path: '/v1/contacts/enrich',
      body: {},
      field: /contact_email|contact_linkedin_url|identifier/,
    },
    {
      name: 'topic id not b2b_<number>',
      call: () => c.buyerIntentContacts({ topic_ids: ['crm'] }),
      path: '/v1/buyer-intent/contacts',
      body: { topic_ids: ['crm'] },
      field: /^topic_ids/,
    },
  ];
  for (const t of cases) {
    it(t.name, async () => {
      const before = sb.ledger.total(ACCOUNT);
      const err = await t.call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).status).toBe(0);
      expect((err as ValidationError).field).toMatch(t.field);
      const res = await raw(sb, 'POST', t.path, JSON.stringify(t.body));
      expect(res.status).toBe(422);
      const e = (res.json as { error: { code: string; field?: string; message: string } }).error;
      expect(e.code).toBe('validation_error');
      expect(e.field ?? '').toMatch(t.field);
      expect(res.headers.get('x-credits-charged') ?? '0').toBe('0');
      expect(sb.ledger.total(ACCOUNT)).toBe(before);
    });
  }
});

describe('rejected by the sandbox, raised typed by the client', () => {
  it('malformed JSON (raw fetch) is 400 invalid_json', async () => {
    const before = sb.ledger.total(ACCOUNT);
    const res = await raw(sb, 'POST', '/v1/companies/enrich', '{"domain": "firm-1.com",');
    expect(res.status).toBe(400);
    expect((res.json as { error: { code: string } }).error.code).toBe('invalid_json');
    expect(sb.ledger.total(ACCOUNT)).toBe(before);
  });

  it('wrong types the client can see are refused before sending; the sandbox refuses them too', async () => {
    const before = sb.ledger.total(ACCOUNT);
    for (const [call, path, body, field] of [
      [() => c.enrichCompany({ domain: 42 as unknown as string }), '/v1/companies/enrich', { domain: 42 }, /domain/],
      [
        () => c.enrichCompany({ domain: 'firm-1.com', limit: '5' as unknown as number }),
        '/v1/companies/enrich',
        { domain: 'firm-1.com', limit: '5' },
        /limit/,
      ],
      [() => c.verifyEmails({ emails: [7 as unknown as string] }), '/v1/emails/verify/bulk', { emails: [7] }, /emails/],
    ] as const) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).status).toBe(0);
      expect((err as ValidationError).field).toMatch(field);
      const res = await raw(sb, 'POST', path, JSON.stringify(body));
      expect(res.status).toBe(422);
      expect((res.json as { error: { field?: string } }).error.field ?? '').toMatch(field);
    }
    expect(sb.ledger.total(ACCOUNT)).toBe(before);
  });

  const cases: { name: string; call: () => Promise<unknown>; field: RegExp }[] = [
    {
      name: 'industries as a string',
      call: () => c.searchCompanies({ industries: 'Software' as unknown as string[] }),
      field: /industries/,
    },
    {
      name: 'job_title as a number',
      call: () => c.searchContacts({ job_title: 5 as unknown as string }),
      field: /job_title/,
    },
    {
      name: 'email_validated as a string',
      call: () => c.buyerIntentContacts({ topic_ids: ['b2b_1'], email_validated: 'yes' as unknown as boolean }),
      field: /email_validated/,
    },
    {
      name: 'an unknown field',
      call: () => c.enrichCompany({ domain: 'firm-1.com', colour: 'blue' } as never),
      field: /colour/,
    },
    {
      name: 'an unknown field in bulk verify',
      call: () => c.verifyEmails({ emails: ['a@b.co'], fast: true } as never),
      field: /fast/,
    },
    {
      name: 'webhook without signal_types',
      call: () => c.createWebhook({ url: 'http://127.0.0.1:9/x' } as never),
      field: /signal_types/,
    },
    { name: 'an invalid single email', call: () => c.verifyEmail({ email: 'not-an-email' }), field: /email/ },
  ];
  for (const t of cases) {
    it(t.name, async () => {
      const before = sb.ledger.total(ACCOUNT);
      const err = await t.call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      const v = err as ValidationError;
      expect(v.status).toBe(422);
      expect(v.code).toBe('validation_error');
      expect(v.field ?? '').toMatch(t.field);
      expect(v.requestId).toMatch(/^req_/);
      expect(v.message).toMatch(/failed with 422/);
      expect(sb.ledger.total(ACCOUNT)).toBe(before);
    });
  }
});
