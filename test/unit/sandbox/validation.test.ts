import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../sandbox/index.ts';
import { call, charged, type Reply, start } from './helpers.ts';

let sb: Sandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.stop());

/** Calls the sandbox and expects the reply to charge nothing, in its header and in the ledger. */
async function callUncharged(method: string, path: string, body: unknown): Promise<Reply> {
  const before = sb.ledger.total();
  const r = await call(sb, method, path, body);
  expect(charged(r)).toBe(0);
  expect(sb.ledger.total()).toBe(before);
  return r;
}

const many = (n: number, f: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => f(i));

const cases: { name: string; path: string; body: unknown; field: string }[] = [
  { name: 'unknown field', path: '/v1/companies/enrich', body: { domain: 'acme.com', colour: 'red' }, field: 'colour' },
  { name: 'no identifier', path: '/v1/companies/enrich', body: { limit: 5 }, field: 'domain' },
  { name: 'invalid domain', path: '/v1/companies/enrich', body: { domain: 'bad..domain' }, field: 'domain' },
  { name: 'domain as a number', path: '/v1/companies/enrich', body: { domain: 42 }, field: 'domain' },
  { name: 'limit over 500', path: '/v1/companies/enrich', body: { domain: 'acme.com', limit: 501 }, field: 'limit' },
  { name: 'limit as a string', path: '/v1/companies/enrich', body: { domain: 'acme.com', limit: '5' }, field: 'limit' },
  {
    name: 'limit not an integer',
    path: '/v1/companies/enrich',
    body: { domain: 'acme.com', limit: 1.5 },
    field: 'limit',
  },
  {
    name: 'more than 25 subtypes',
    path: '/v1/companies/enrich',
    body: { domain: 'acme.com', signal_subtypes: many(26, () => 'companyNews') },
    field: 'signal_subtypes',
  },
  {
    name: 'unknown signal type',
    path: '/v1/companies/enrich',
    body: { domain: 'acme.com', signal_types: ['news', 'horoscope'] },
    field: 'signal_types.1',
  },
  {
    name: 'detected_after not a datetime',
    path: '/v1/companies/enrich',
    body: { domain: 'acme.com', detected_after: 'yesterday' },
    field: 'detected_after',
  },
  {
    name: 'more than 100 domains',
    path: '/v1/companies/enrich/bulk',
    body: { domains: many(101, (i) => `d${i}.com`) },
    field: 'domains',
  },
  { name: 'empty domains', path: '/v1/companies/enrich/bulk', body: { domains: [] }, field: 'domains' },
  {
    name: 'more than 1,000 emails',
    path: '/v1/emails/verify/bulk',
    body: { emails: many(1001, (i) => `u${i}@acme.com`) },
    field: 'emails',
  },
  { name: 'email as a number', path: '/v1/emails/verify/bulk', body: { emails: ['a@b.com', 7] }, field: 'emails.1' },
  { name: 'invalid single email', path: '/v1/emails/verify', body: { email: 'not-an-email' }, field: 'email' },
  { name: 'no contact identifier', path: '/v1/contacts/enrich', body: {}, field: 'contact_email' },
  {
    name: 'topic id not b2b_<number>',
    path: '/v1/buyer-intent/contacts',
    body: { topic_ids: ['crm'] },
    field: 'topic_ids.0',
  },
  {
    name: 'topic outside the catalog',
    path: '/v1/buyer-intent/contacts/export',
    body: { topic_ids: ['b2b_38001'] },
    field: 'topic_ids.0',
  },
  {
    name: 'page_size over 1000',
    path: '/v1/buyer-intent/contacts',
    body: { topic_ids: ['b2b_1'], page_size: 1001 },
    field: 'page_size',
  },
  {
    name: 'unknown seniority',
    path: '/v1/buyer-intent/contacts',
    body: { topic_ids: ['b2b_1'], seniority: ['Intern'] },
    field: 'seniority.0',
  },
  {
    name: 'cursor not issued here',
    path: '/v1/buyer-intent/contacts',
    body: { topic_ids: ['b2b_1'], cursor: 'x' },
    field: 'cursor',
  },
  { name: 'webhook without url', path: '/v1/webhooks', body: { signal_types: ['news'] }, field: 'url' },
  { name: 'webhook url not http', path: '/v1/webhooks', body: { url: 'ftp://x', signal_types: [] }, field: 'url' },
  { name: 'body not an object', path: '/v1/companies/enrich', body: [1, 2], field: 'body' },
  {
    name: 'unknown nested field',
    path: '/v1/companies/search',
    body: { content_filters: { moods: ['x'] } },
    field: 'content_filters.moods',
  },
];

describe('bad input: 422 naming the field, nothing charged', () => {
  for (const t of cases) {
    it(t.name, async () => {
      const r = await callUncharged('POST', t.path, t.body);
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('validation_error');
      expect(r.json.error.field).toBe(t.field);
      expect(r.json.error.message).toContain(t.field);
    });
  }

  it('unknown query parameters and bad query values of GET endpoints', async () => {
    const extra = await call(sb, 'GET', '/v1/companies/enrich?domain=acme.com&colour=red');
    expect(extra.status).toBe(422);
    expect(extra.json.error.field).toBe('colour');
    const limit = await call(sb, 'GET', '/v1/buyer-intent/topics?limit=0');
    expect(limit.json.error.field).toBe('limit');
  });
});

describe('malformed requests', () => {
  it('malformed JSON is 400 invalid_json, an empty body too', async () => {
    for (const body of ['{"domain": "acme.com",', '']) {
      const r = await callUncharged('POST', '/v1/companies/enrich', body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_json');
    }
  });

  it('unknown paths are 404, wrong methods 405 with Allow', async () => {
    const missing = await call(sb, 'GET', '/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
    const wrong = await call(sb, 'DELETE', '/v1/stats');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it('bodies over 10 MiB are 413', async () => {
    const r = await call(sb, 'POST', '/v1/emails/verify', JSON.stringify({ email: 'x'.repeat(11 * 1024 * 1024) }));
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('payload_too_large');
  });
});
