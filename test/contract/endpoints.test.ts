import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Signal } from '../../connectors/signal-api/index.ts';
import { client, findDomains, KEY_2, movableClock, type Sandbox, sandbox, T0, type TestClient } from './helpers.ts';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let sb: Sandbox;
let c: TestClient;
let known: string[];
let unknown: string[];

beforeAll(async () => {
  sb = await sandbox({ clock: movableClock(T0) });
  c = client(sb);
  ({ known, unknown } = await findDomains(c));
});

afterAll(async () => {
  await c?.close();
  await sb?.stop();
});

function expectNormalized(s: Signal): void {
  expect(s.signal_id).toMatch(/^sig_[0-9a-z]+$|^[0-9a-f-]{36}$/i);
  expect(s.detected_at).toMatch(ISO_Z);
  expect(Date.parse(s.detected_at)).toBeLessThanOrEqual(T0);
  expect(s.signal_type).not.toBe('');
  expect(typeof s.data.summary).toBe('string');
  if (s.signal_name === '') expect(s.data.summary).toBe('');
  if (s.company) expect(s.company.domain).toBe(s.company.domain.toLowerCase());
}

describe('companies', () => {
  it('the fixture has both resolving and unknown domains', () => {
    expect(known.length).toBeGreaterThan(10);
    expect(unknown.length).toBeGreaterThan(0);
  });

  it('enrichCompany returns normalized signals, newest first, and a consistent summary', async () => {
    const r = await c.enrichCompany({ domain: known[0]!.toUpperCase(), limit: 50 });
    expect(r.company.domain).toBe(known[0]);
    expect(r.signals.length).toBeGreaterThan(0);
    r.signals.forEach(expectNormalized);
    expect(r.signals.every((s) => s.signal_id.startsWith('sig_'))).toBe(true);
    const times = r.signals.map((s) => s.detected_at);
    expect([...times].sort().reverse()).toEqual(times);
    const counted: Record<string, number> = {};
    for (const s of r.signals) counted[s.signal_type] = (counted[s.signal_type] ?? 0) + 1;
    expect(r.signal_summary).toEqual(counted);
    expect(r.coverage?.total_after_filters).toBeGreaterThanOrEqual(r.signals.length);
    expect(r.credits).toBe(2 * r.signals.length);
    expect(r.requestId).toMatch(/^req_[0-9a-f]+$/);
    if (r.company.linkedin_url) expect(r.company.linkedin_url_absolute).toMatch(/^https:\/\/www\.linkedin\.com\//);
  });

  it('filters by type, subtype, date and limit', async () => {
    const all = await c.enrichCompany({ domain: known[1]!, limit: 500 });
    const type = all.signals[0]!.signal_type;
    const byType = await c.enrichCompany({ domain: known[1]!, signal_types: [type], limit: 500 });
    expect(byType.signals.every((s) => s.signal_type === type)).toBe(true);
    const cut = all.signals[Math.floor(all.signals.length / 2)]!.detected_at;
    const recent = await c.enrichCompany({ domain: known[1]!, detected_after: new Date(cut), limit: 500 });
    expect(recent.signals.every((s) => s.detected_at > cut)).toBe(true);
    const two = await c.enrichCompany({ domain: known[1]!, limit: 2 });
    expect(two.signals).toHaveLength(Math.min(2, all.signals.length));
  });

  it('resolves by company_name and linkedin_url as well', async () => {
    const base = await c.enrichCompany({ domain: known[2]!, limit: 1 });
    const byName = await c.enrichCompany({ company_name: base.company.name, limit: 1 }).catch((e: Error) => e);
    if (!(byName instanceof Error)) expect(byName.company.name).toBe(base.company.name);
    else expect(byName.name).toBe('NotFoundError');
    if (base.company.linkedin_url) {
      const byUrl = await c.enrichCompany({ linkedin_url: base.company.linkedin_url_absolute!, limit: 1 });
      expect(byUrl.company.domain).toBe(base.company.domain);
    }
  });

  it('an unknown domain is NotFoundError', async () => {
    await expect(c.enrichCompany({ domain: unknown[0]! })).rejects.toMatchObject({
      name: 'NotFoundError',
      status: 404,
      code: 'not_found',
    });
  });

  it('enrichCompanyLegacy maps the older GET form onto the same result', async () => {
    const modern = await c.enrichCompany({ domain: known[3]!, limit: 100 });
    const legacy = await c.enrichCompanyLegacy({ domain: known[3]! });
    expect(legacy.company.domain).toBe(known[3]);
    expect(legacy.company.name).toBe(modern.company.name);
    legacy.signals.forEach(expectNormalized);
    expect(legacy.signals.map((s) => s.signal_type)).toEqual(modern.signals.map((s) => s.signal_type));
    expect(legacy.credits).toBe(2 * legacy.signals.length);
    expect(legacy.legacy['domain']).toBe(known[3]);
  });

  it('enrichCompanies returns one result per distinct domain, in order', async () => {
    const domains = [known[0]!, unknown[0]!, 'bad..domain', known[0]!.toUpperCase(), known[4]!];
    const r = await c.enrichCompanies({ domains, limit: 5 });
    // duplicates (case-insensitively) collapse; order of first appearance
    expect(r.results.map((x) => x.domain)).toEqual([known[0], unknown[0], 'bad..domain', known[4]]);
    const byDomain = new Map(r.results.map((x) => [x.domain, x]));
    expect(byDomain.get(known[0]!)?.status).toBe('ok');
    expect(byDomain.get(unknown[0]!)?.status).toBe('not_found');
    expect(byDomain.get('bad..domain')?.status).toBe('error');
    expect(byDomain.get(known[4]!)?.status).toBe('ok');
    const signals = r.results.reduce((n, x) => n + (x.status === 'ok' ? x.signals.length : 0), 0);
    expect(r.summary.signals).toBe(signals);
    expect(r.credits).toBe(2 * signals);
    for (const x of r.results) if (x.status === 'ok') x.signals.forEach(expectNormalized);
  });

  it('searchCompanies: distinct companies, most recent signal first', async () => {
    const r = await c.searchCompanies({ limit: 20 });
    expect(r.companies.length).toBeGreaterThan(0);
    expect(new Set(r.companies.map((x) => x.domain)).size).toBe(r.companies.length);
    const latest = r.companies.map((x) => x.latest_signal_at ?? '');
    expect([...latest].sort().reverse()).toEqual(latest);
    expect(r.credits).toBe(r.companies.length);
  });
});

describe('contacts', () => {
  it('searchContacts and enrichContact', async () => {
    const found = await c.searchContacts({ limit: 10 });
    expect(found.contacts.length).toBeGreaterThan(0);
    const email = found.contacts.find((x) => x.contact.email)?.contact.email;
    expect(email).toBeTruthy();
    const r = await c.enrichContact({ contact_email: email! });
    expect(r.contact.email).toBe(email);
    r.contact_signals.forEach(expectNormalized);
    expect(r.credits).toBe(2 * r.contact_signals.length);
    if (r.company) expect(r.company.domain).toBe(r.company.domain.toLowerCase());
  });
});

describe('lookups', () => {
  it('getSignal by the sig_ id of enrich and by the UUID of a lookup', async () => {
    const r = await c.enrichCompany({ domain: known[0]!, limit: 1 });
    const first = r.signals[0]!;
    const a = await c.getSignal(first.signal_id);
    expectNormalized(a);
    expect(a.credits).toBe(0);
    expect(a.signal_type).toBe(first.signal_type);
    expect(a.detected_at).toBe(first.detected_at);
    if (UUID.test(a.signal_id)) {
      const b = await c.getSignal(a.signal_id);
      expect(b.detected_at).toBe(a.detected_at);
    }
  });

  it('an unknown signal id is NotFoundError', async () => {
    await expect(c.getSignal('sig_doesnotexist')).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('listSignalTypes and getStats are free', async () => {
    const types = await c.listSignalTypes();
    expect(types.types.length).toBeGreaterThanOrEqual(12);
    expect(types.types.find((t) => t.signal_type === 'news')?.subtypes).toContain('companyNews');
    expect(types.credits).toBe(0);
    const stats = await c.getStats();
    expect(stats.credits).toBe(0);
    expect(stats.total_signals).toBeGreaterThan(0);
    if (stats.generated_at) expect(stats.generated_at).toMatch(ISO_Z);
  });
});

describe('buyer intent', () => {
  it('iterates contacts of a topic to the end, page by page', async () => {
    const pages = [];
    for await (const page of c.iterateBuyerIntentContactPages({ topic_ids: ['b2b_42'], page_size: 17 }))
      pages.push(page);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.at(-1)?.next_cursor).toBeNull();
    expect(pages.slice(0, -1).every((p) => p.contacts.length === 17 && p.next_cursor)).toBe(true);
    const contacts = pages.flatMap((p) => p.contacts);
    expect(contacts.every((x) => x.topic_id === 'b2b_42')).toBe(true);
    // keyset pagination neither repeats nor skips: the walk equals one big page, item for item
    const whole = await c.buyerIntentContacts({ topic_ids: ['b2b_42'], page_size: 1000 });
    expect(whole.next_cursor).toBeNull();
    expect(contacts).toEqual(whole.contacts);
    expect(pages.map((p) => p.credits)).toEqual(pages.map((p) => p.contacts.length));
    let n = 0;
    for await (const _ of c.iterateBuyerIntentContacts({ topic_ids: ['b2b_42'], page_size: 50 })) n++;
    expect(n).toBe(contacts.length);
  });

  it('email_validated keeps validated contacts only', async () => {
    const page = await c.buyerIntentContacts({ topic_ids: ['b2b_42'], email_validated: true, page_size: 100 });
    expect(page.contacts.every((x) => x.contact.email_validation_status !== null)).toBe(true);
  });

  it('walks the whole topic catalog', async () => {
    const ids = new Set<string>();
    let pages = 0;
    for await (const page of c.iterateTopicPages({ limit: 1000 })) {
      pages++;
      for (const t of page.topics) ids.add(t.topic_id);
      expect(page.credits).toBe(0);
    }
    expect(ids.size).toBe(38_000);
    expect(ids.has('b2b_1') && ids.has('b2b_38000')).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(38);
    const found = await c.searchTopics({ q: 'software', limit: 5 });
    expect(found.topics.length).toBeGreaterThan(0);
  });
});

describe('email verification', () => {
  it('verifyEmail and verifyEmails', async () => {
    const one = await c.verifyEmail({ email: 'ada@gmial.com' });
    expect(one.result.email).toBe('ada@gmial.com');
    expect(['deliverable', 'undeliverable', 'risky', 'unknown']).toContain(one.result.result);
    expect(one.result.details.suggested_correction).toBe('ada@gmail.com');
    if (one.result.validated_at) expect(one.result.validated_at).toMatch(ISO_Z);
    const emails = ['info@acme.com', 'x@mailinator.com', 'bob@gmail.com', 'bob@gmail.com', 'not-an-email'];
    const bulk = await c.verifyEmails({ emails });
    expect(bulk.summary.total).toBe(bulk.verifications.length);
    expect(bulk.errors.find((e) => e.email === 'not-an-email')?.code).toBe('invalid_email');
    const role = bulk.verifications.find((v) => v.email === 'info@acme.com');
    expect(role?.details.is_role_account).toBe(true);
  });
});

describe('authentication', () => {
  it('accepts both keys and both header forms; rejects an unknown key', async () => {
    const second = client(sb, { apiKey: KEY_2, auth: 'bearer' });
    expect((await second.getStats()).credits).toBe(0);
    await second.close();
    const wrong = client(sb, { apiKey: 'sk_nope' });
    await expect(wrong.getStats()).rejects.toMatchObject({ name: 'AuthenticationError', status: 401 });
    await wrong.close();
  });
});
