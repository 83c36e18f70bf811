import { afterEach, describe, expect, it } from 'vitest';
import { isValidDomain, NOT_FOUND_SHARE, resolveCompany } from '../../../sandbox/data/companies.ts';
import { verifyEmail } from '../../../sandbox/data/emails.ts';
import { SIGNAL_TYPES } from '../../../sandbox/data/signal-types.ts';
import { TOPIC_COUNT, topic } from '../../../sandbox/data/topics.ts';
import type { Sandbox } from '../../../sandbox/index.ts';
import { hashString, Rng } from '../../../sandbox/random.ts';
import { call, charged, knownDomains, movableClock, start, T0 } from './helpers.ts';

let sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.map((s) => s.stop()));
  sandboxes = [];
});
async function open(options: Parameters<typeof start>[0] = {}): Promise<Sandbox> {
  const s = await start(options);
  sandboxes.push(s);
  return s;
}

/** A response body without the per-request parts. */
const stable = (text: string): string => text.replace(/req_[0-9a-f]+/g, 'req');

describe('determinism', () => {
  it('the same seed gives the same data, a different seed different data', async () => {
    const [a, b, c] = await Promise.all([open({ seed: 3 }), open({ seed: 3 }), open({ seed: 4 })]);
    const paths: [string, string, unknown][] = [
      ['POST', '/v1/companies/enrich', { domain: 'acme-robotics.com' }],
      ['POST', '/v1/companies/enrich/bulk', { domains: ['a1.com', 'b2.io', 'c3.ai'] }],
      ['POST', '/v1/contacts/enrich', { contact_email: 'maria.lopez@acme-robotics.com' }],
      ['POST', '/v1/companies/search', { limit: 10 }],
      ['POST', '/v1/buyer-intent/contacts', { topic_ids: ['b2b_77'] }],
      ['GET', '/v1/buyer-intent/topics?limit=20', undefined],
      ['POST', '/v1/emails/verify/bulk', { emails: ['x.y@acme-robotics.com', 'info@gmail.com'] }],
      ['GET', '/v1/stats', undefined],
    ];
    for (const [method, path, body] of paths) {
      const [ra, rb, rc] = await Promise.all([a, b, c].map((s) => call(s, method, path, body)));
      expect(stable(ra!.text)).toBe(stable(rb!.text));
      if (!path.includes('topics')) expect(stable(ra!.text)).not.toBe(stable(rc!.text));
    }
  });

  it('seeded helpers are stable', () => {
    expect(hashString('acme.com', 1)).toBe(hashString('acme.com', 1));
    expect(hashString('acme.com', 1)).not.toBe(hashString('acme.com', 2));
    const r1 = new Rng(42);
    const r2 = new Rng(42);
    expect(Array.from({ length: 5 }, () => r1.u32())).toEqual(Array.from({ length: 5 }, () => r2.u32()));
  });
});

describe('companies and signals', () => {
  it('about 8% of valid domains resolve to nothing', () => {
    let missing = 0;
    for (let i = 0; i < 5000; i++) if (!resolveCompany(1, `company-${i}.com`)) missing++;
    expect(missing / 5000).toBeGreaterThan(NOT_FOUND_SHARE - 0.02);
    expect(missing / 5000).toBeLessThan(NOT_FOUND_SHARE + 0.02);
    expect(resolveCompany(1, 'nowhere.example')).toBeNull();
    expect(isValidDomain('bad..domain')).toBe(false);
    expect(isValidDomain('-x.com')).toBe(false);
    expect(isValidDomain('acme.co.uk')).toBe(true);
  });

  it('company fields: optional ones sometimes absent, LinkedIn URLs sometimes relative, description often null', () => {
    const companies = Array.from({ length: 2000 }, (_, i) => resolveCompany(1, `firm${i}.com`)).filter(
      (c) => c !== null,
    );
    const share = (f: (c: (typeof companies)[number]) => boolean) => companies.filter(f).length / companies.length;
    expect(share((c) => c.company.linkedin_url === undefined)).toBeGreaterThan(0.1);
    expect(share((c) => c.company.linkedin_url?.startsWith('/company/') === true)).toBeGreaterThan(0.1);
    expect(share((c) => c.company.industries === undefined)).toBeGreaterThan(0.05);
    expect(share((c) => c.company.employee_count_low === undefined)).toBeGreaterThan(0.1);
    expect(share((c) => c.company.revenue === undefined)).toBeGreaterThan(0.2);
    expect(share((c) => c.company.description === null)).toBeGreaterThan(0.3);
    expect(share((c) => !('description' in c.company))).toBeGreaterThan(0.1);
  });

  it('enrich returns signals newest first, at or before the clock, of many types with spec 2.2 data', async () => {
    const sb = await open();
    const domains = await knownDomains(sb, 40, 5);
    const types = new Set<string>();
    let emptyNames = 0;
    let total = 0;
    for (const domain of domains) {
      const r = await call(sb, 'POST', '/v1/companies/enrich', { domain, limit: 500 });
      const times = r.json.signals.map((s: { detected_at: string }) => Date.parse(s.detected_at));
      expect([...times].sort((x, y) => y - x)).toEqual(times);
      expect(Math.max(...times)).toBeLessThanOrEqual(T0);
      expect(r.json.coverage.total_before_filters).toBe(r.json.signals.length);
      for (const s of r.json.signals) {
        expect(s.signal_id).toMatch(/^sig_[0-9a-f]{32}$/);
        expect(s.detected_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(typeof s.data.summary).toBe('string');
        if (s.signal_type === 'hiring-trends') expect(s.data.trending_titles.length).toBeGreaterThan(0);
        if (s.signal_type === 'sec-10k') expect(Array.isArray(s.data.highlights)).toBe(true);
        if (s.signal_type === 'website-intelligence') {
          expect(s.data).toMatchObject({ evidence: expect.any(String), impact_rationale: expect.any(String) });
          expect(s.data.relevance).toBeGreaterThanOrEqual(0);
          expect(s.data.relevance).toBeLessThanOrEqual(1);
        }
        if (s.signal_type === 'sec-8k' && s.data.filing_date) expect(s.data.filing_date).toMatch(/^\d{4}-\d\d-\d\d$/);
        types.add(s.signal_type);
        if (s.signal_name === '') emptyNames++;
        total++;
      }
      const summed = Object.values(r.json.signal_summary as Record<string, number>).reduce((x, y) => x + y, 0);
      expect(summed).toBe(r.json.signals.length);
    }
    expect(types.size).toBeGreaterThanOrEqual(12);
    expect(emptyNames / total).toBeGreaterThan(0.3);
    expect(SIGNAL_TYPES.find((t) => t.type === 'website-intelligence')?.subtypes).toHaveLength(38);
  });

  it('filters by type, subtype and detected_after; limit caps the page, coverage counts the rest', async () => {
    const sb = await open();
    const [domain] = await knownDomains(sb, 1, 40);
    const all = await call(sb, 'POST', '/v1/companies/enrich', { domain, limit: 500 });
    const type = all.json.signals[0].signal_type;
    const byType = await call(sb, 'POST', '/v1/companies/enrich', { domain, signal_types: [type], limit: 2 });
    expect(byType.json.signals.every((s: { signal_type: string }) => s.signal_type === type)).toBe(true);
    expect(byType.json.coverage.total_after_filters).toBe(
      all.json.signals.filter((s: { signal_type: string }) => s.signal_type === type).length,
    );
    expect(byType.json.coverage.total_before_filters).toBe(all.json.signals.length);
    const middle = all.json.signals[10].detected_at;
    const recent = await call(sb, 'POST', '/v1/companies/enrich', { domain, detected_after: middle, limit: 500 });
    expect(recent.json.signals).toEqual(all.json.signals.slice(0, 10));
    const sub = all.json.signals[0].signal_subtype;
    const bySub = await call(sb, 'POST', '/v1/companies/enrich', { domain, signal_subtypes: [sub] });
    expect(bySub.json.signals.every((s: { signal_subtype: string }) => s.signal_subtype === sub)).toBe(true);
  });

  it('moving the clock forward reveals new signals; ids resolve in both forms', async () => {
    const clock = movableClock();
    const sb = await open({ clock });
    const [domain] = await knownDomains(sb, 1, 30);
    const before = await call(sb, 'POST', '/v1/companies/enrich', { domain, limit: 500 });
    clock.advance(365 * 86_400_000);
    const after = await call(sb, 'POST', '/v1/companies/enrich', { domain, limit: 500 });
    expect(after.json.signals.length).toBeGreaterThan(before.json.signals.length);
    expect(after.json.signals.slice(-before.json.signals.length)).toEqual(before.json.signals);
    const id: string = before.json.signals[0].signal_id;
    const hex = id.slice(4);
    const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    for (const form of [id, uuid]) {
      const r = await call(sb, 'GET', `/v1/signals/${form}`);
      expect(r.status).toBe(200);
      expect(charged(r)).toBe(0);
      expect(r.json.signal_id).toBe(uuid);
      expect(r.json.detected_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
      expect(r.json.data).toEqual(before.json.signals[0].data);
    }
    expect((await call(sb, 'GET', `/v1/signals/sig_${'0'.repeat(32)}`)).status).toBe(404);
    expect((await call(sb, 'GET', '/v1/signals/not-an-id')).status).toBe(404);
  });

  it('resolves companies by LinkedIn URL (absolute or relative) and by name', async () => {
    const sb = await open();
    const r1 = await call(sb, 'POST', '/v1/companies/enrich', {
      linkedin_url: 'https://www.linkedin.com/company/acme-robotics/',
    });
    const r2 = await call(sb, 'POST', '/v1/companies/enrich', { linkedin_url: '/company/acme-robotics' });
    const r3 = await call(sb, 'POST', '/v1/companies/enrich', { domain: 'acme-robotics.com' });
    const r4 = await call(sb, 'POST', '/v1/companies/enrich', { company_name: r3.json.company.name });
    for (const r of [r1, r2, r4]) expect(r.json.company).toEqual(r3.json.company);
    const bad = await call(sb, 'POST', '/v1/companies/enrich', { linkedin_url: 'https://example.com/acme' });
    expect(bad.json.error.field).toBe('linkedin_url');
  });

  it('older GET enrich form has the legacy shape', async () => {
    const sb = await open();
    const [domain] = await knownDomains(sb, 1, 3);
    const r = await call(sb, 'GET', `/v1/companies/enrich?domain=${domain}&limit=3`);
    expect(r.json).toMatchObject({
      domain,
      company: expect.any(String),
      funding: { total_raised: expect.anything(), last_round: expect.anything(), valuation: expect.anything() },
      signal_count: 3,
    });
    expect(r.json.signals[0]).toEqual({
      type: expect.any(String),
      subtype: expect.any(String),
      date: expect.any(String),
      summary: expect.any(String),
      id: expect.stringMatching(/^sig_/),
    });
  });
});

describe('contacts, search, catalog', () => {
  it('contact enrich by email and LinkedIn URL give the same person', async () => {
    const sb = await open();
    const found = await call(sb, 'POST', '/v1/contacts/search', { limit: 1 });
    const person = found.json.contacts[0].contact;
    const byEmail = await call(sb, 'POST', '/v1/contacts/enrich', { contact_email: person.email });
    const byUrl = await call(sb, 'POST', '/v1/contacts/enrich', { contact_linkedin_url: person.linkedin_url });
    expect(byEmail.json.contact).toEqual(person);
    expect(byUrl.json.contact).toEqual(person);
    expect(byEmail.json.total).toBe(byEmail.json.contact_signals.length);
    for (const s of byEmail.json.contact_signals) expect(s.association).toBe('contact');
    const free = await call(sb, 'POST', '/v1/contacts/enrich', { contact_email: 'someone@gmail.com' });
    expect(free.status).toBe(404);
  });

  it('company search: distinct companies, newest signal first, filters applied', async () => {
    const sb = await open();
    const r = await call(sb, 'POST', '/v1/companies/search', {
      signal_types: ['linkedin-post-company'],
      employee_count_min: 200,
      content_filters: { technologies: ['Snowflake', 'Kubernetes'] },
      limit: 20,
    });
    const list = r.json.companies;
    expect(list.length).toBeGreaterThan(0);
    expect(new Set(list.map((c: { domain: string }) => c.domain)).size).toBe(list.length);
    const times = list.map((c: { latest_signal_at: string }) => Date.parse(c.latest_signal_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  it('topics: 38,000 distinct names', () => {
    const names = new Set<string>();
    for (let n = 1; n <= TOPIC_COUNT; n++) names.add(topic(1, n).name);
    expect(names.size).toBe(TOPIC_COUNT);
  });
});

describe('email verification is decided by the address', () => {
  const v = (email: string) => verifyEmail(1, email, T0);
  it.each([
    ['jane@gmial.com', 'undeliverable', 'possible_typo'],
    ['someone@mailinator.com', 'undeliverable', 'disposable_email'],
    ['jane@host.invalid', 'undeliverable', 'no_mx_record'],
    ['jane@nomx-corp.com', 'undeliverable', 'no_mx_record'],
    ['jane@catchall-corp.com', 'risky', 'catch_all'],
    ['unknown.jane@acme.com', 'unknown', 'smtp_timeout'],
    ['bounce.jane@acme-robotics.com', 'undeliverable', 'mailbox_not_found'],
  ])('%s → %s (%s)', (email, result, reason) => {
    expect(v(email)).toMatchObject({ result, reason });
  });

  it('flags free providers, role accounts and suggests corrections', () => {
    expect(v('jane@gmial.com').details).toMatchObject({ suggested_correction: 'jane@gmail.com', has_mx_record: false });
    expect(v('jane.doe@gmail.com').details.is_free_provider).toBe(true);
    const role = v('info@acme-robotics.com');
    expect(role.details.is_role_account).toBe(true);
    expect(['risky', 'unknown']).toContain(role.result);
    const results = new Set(Array.from({ length: 300 }, (_, i) => v(`p${i}.x@firm${i % 30}.com`).result));
    expect([...results].sort()).toEqual(['deliverable', 'risky', 'undeliverable', 'unknown']);
  });
});
