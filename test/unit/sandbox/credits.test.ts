import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../sandbox/index.ts';
import { ACCOUNT, call, charged, knownDomains, type Reply, start } from './helpers.ts';

let sb: Sandbox;
let known: string[];

beforeAll(async () => {
  sb = await start();
  known = await knownDomains(sb, 6, 3);
});
afterAll(() => sb.stop());

/** Runs a call and checks the header against the ledger's growth; returns the reply. */
async function metered(fn: () => Promise<Reply>): Promise<Reply> {
  const before = sb.ledger.total(ACCOUNT);
  const r = await fn();
  expect(sb.ledger.total(ACCOUNT) - before).toBe(charged(r));
  expect(Number(r.headers.get('x-credits-remaining'))).toBe(sb.ledger.balance(ACCOUNT));
  return r;
}

describe('credit rules (spec 8) against the ledger', () => {
  it('company enrich: 2 per signal returned', async () => {
    const r = await metered(() => call(sb, 'POST', '/v1/companies/enrich', { domain: known[0], limit: 3 }));
    expect(r.status).toBe(200);
    expect(r.json.signals.length).toBe(3);
    expect(charged(r)).toBe(6);
    const entry = sb.ledger.entries.at(-1)!;
    expect(entry).toMatchObject({ account: ACCOUNT, key: 'sk_test_1', method: 'POST', credits: 6 });
    expect(entry.requestId).toBe(r.headers.get('x-request-id'));
  });

  it('company enrich: zero signals, unknown company and the older GET form', async () => {
    const none = await metered(() =>
      call(sb, 'POST', '/v1/companies/enrich', { domain: known[1], detected_after: '2099-01-01T00:00:00Z' }),
    );
    expect(none.status).toBe(200);
    expect(none.json.signals).toEqual([]);
    expect(charged(none)).toBe(0);
    const missing = await metered(() => call(sb, 'POST', '/v1/companies/enrich', { domain: 'nowhere.example' }));
    expect(missing.status).toBe(404);
    expect(charged(missing)).toBe(0);
    const legacy = await metered(() => call(sb, 'GET', `/v1/companies/enrich?domain=${known[2]}&limit=2`));
    expect(legacy.json.signals.length).toBe(2);
    expect(charged(legacy)).toBe(4);
  });

  it('bulk enrich: 2 per signal across the batch; not_found and invalid domains free', async () => {
    const r = await metered(() =>
      call(sb, 'POST', '/v1/companies/enrich/bulk', {
        domains: [known[0], known[1], 'nowhere.example', 'bad..domain', known[0]],
        limit: 2,
      }),
    );
    expect(r.json.summary).toEqual({ requested: 4, ok: 2, not_found: 1, error: 1, signals: 4 });
    expect(r.json.results.map((x: { status: string }) => x.status)).toEqual(['ok', 'ok', 'not_found', 'error']);
    expect(charged(r)).toBe(8);
  });

  it('lookups by id, types, stats, topics, export polls and webhook management are free', async () => {
    const e = await call(sb, 'POST', '/v1/companies/enrich', { domain: known[3], limit: 1 });
    const id = e.json.signals[0].signal_id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/signals/${id}`],
      ['GET', '/v1/signals/types'],
      ['GET', '/v1/stats'],
      ['GET', '/v1/buyer-intent/topics?q=cloud'],
      ['POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/x', signal_types: ['news'] }],
      ['GET', '/v1/webhooks'],
    ];
    for (const [method, path, body] of calls) {
      const r = await metered(() => call(sb, method, path, body));
      expect(r.status).toBeLessThan(300);
      expect(charged(r)).toBe(0);
    }
  });

  it('email verify: 1 per verified address, unknown free, duplicates once, invalid free', async () => {
    const one = await metered(() => call(sb, 'POST', '/v1/emails/verify', { email: 'jane.doe@acme.com' }));
    expect(one.json.result.result).not.toBe('unknown');
    expect(charged(one)).toBe(1);
    const unknown = await metered(() => call(sb, 'POST', '/v1/emails/verify', { email: 'unknown.person@acme.com' }));
    expect(unknown.json.result.result).toBe('unknown');
    expect(charged(unknown)).toBe(0);
    const bulk = await metered(() =>
      call(sb, 'POST', '/v1/emails/verify/bulk', {
        emails: [
          'a.b@acme.com',
          'A.B@ACME.com',
          ' a.b@acme.com ',
          'unknown.1@acme.com',
          'unknown.2@acme.com',
          'not-an-email',
          'c.d@gmail.com',
        ],
      }),
    );
    expect(bulk.json.summary.total).toBe(4);
    expect(bulk.json.summary.unknown).toBe(2);
    expect(bulk.json.verifications.length).toBe(4);
    expect(bulk.json.errors).toEqual([expect.objectContaining({ email: 'not-an-email', code: 'invalid_email' })]);
    expect(charged(bulk)).toBe(2);
  });

  it('buyer-intent contacts: 1 per contact; exports: 25 per topic at submit', async () => {
    const page = await metered(() =>
      call(sb, 'POST', '/v1/buyer-intent/contacts', { topic_ids: ['b2b_7'], page_size: 13 }),
    );
    expect(page.json.contacts.length).toBe(13);
    expect(charged(page)).toBe(13);
    const exp = await metered(() =>
      call(sb, 'POST', '/v1/buyer-intent/contacts/export', { topic_ids: ['b2b_7', 'b2b_8', 'b2b_7'] }),
    );
    expect(exp.status).toBe(202);
    expect(charged(exp)).toBe(50);
  });

  it('searches: 1 per company or contact returned; contact enrich: 2 per person-level signal', async () => {
    const companies = await metered(() => call(sb, 'POST', '/v1/companies/search', { limit: 4 }));
    expect(companies.json.companies.length).toBe(4);
    expect(charged(companies)).toBe(4);
    const contacts = await metered(() => call(sb, 'POST', '/v1/contacts/search', { limit: 3 }));
    expect(contacts.json.contacts.length).toBe(3);
    expect(charged(contacts)).toBe(3);
    const email = contacts.json.contacts[0].contact.email;
    const person = await metered(() => call(sb, 'POST', '/v1/contacts/enrich', { contact_email: email }));
    expect(person.json.contact_signals.length).toBeGreaterThan(0);
    expect(charged(person)).toBe(2 * person.json.contact_signals.length);
  });

  it('402 when the balance cannot cover a charge: nothing returned, nothing charged', async () => {
    const poor = await start({ accounts: [{ id: 'poor', keys: ['sk_poor'], credits: 5 }] });
    try {
      // same seed, same data: known[0] has at least 3 signals here too
      const r = await call(poor, 'POST', '/v1/companies/enrich', { domain: known[0], limit: 3 }, { key: 'sk_poor' });
      expect(r.status).toBe(402);
      expect(r.json.error.code).toBe('insufficient_credits');
      expect(charged(r)).toBe(0);
      expect(r.headers.get('x-credits-remaining')).toBe('5');
      expect(poor.ledger.total('poor')).toBe(0);
      const ok = await call(poor, 'POST', '/v1/companies/enrich', { domain: known[0], limit: 2 }, { key: 'sk_poor' });
      expect(ok.status).toBe(200);
      expect(poor.ledger.balance('poor')).toBe(1);
      poor.accounts.setCredits('poor', 0);
      const verify = await call(poor, 'POST', '/v1/emails/verify', { email: 'x.y@acme.com' }, { key: 'sk_poor' });
      expect(verify.status).toBe(402);
      // a free call still works at zero balance
      expect((await call(poor, 'GET', '/v1/stats', undefined, { key: 'sk_poor' })).status).toBe(200);
    } finally {
      await poor.stop();
    }
  });
});
