import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalClient, UnexpectedResponseError } from '../../../connectors/signal-api/index.ts';
import { enrichBody, sendJson, signalBody, startTestServer, type TestServer } from './server.ts';

let server: TestServer;
let client: SignalClient;
/** The body the next request gets (by path). */
const bodies = new Map<string, unknown>();

beforeAll(async () => {
  server = await startTestServer((req, res) => {
    const path = req.url.split('?')[0] ?? '';
    if (!bodies.has(path)) return sendJson(res, 404, { error: { code: 'not_found', message: 'no fixture' } });
    sendJson(res, 200, bodies.get(path), { 'x-credits-charged': '4', 'x-request-id': 'req_fixture' });
  });
  client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_parse', retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

const UUID = '2f1c7a9e-5b3d-4c8e-9a1f-0e2d3c4b5a69';

describe('signals', () => {
  it('accepts sig_ and UUID ids, Z and +00:00 with milliseconds, and outputs UTC Z', async () => {
    bodies.set(
      '/v1/companies/enrich',
      enrichBody({
        signals: [
          signalBody('sig_1', { signal_subtype: 'companyNews', signal_name: 'One', data: { summary: 's1' } }),
          signalBody(UUID, {
            signal_type: 'sec-8k',
            signal_subtype: 'cfoChange',
            signal_name: 'Two',
            detected_at: '2026-03-01T14:30:00.250+02:00',
            data: { summary: 's2', filing_date: '2026-02-28', metrics: { timeframe: 'next_quarter' } },
          }),
          signalBody('sig_3', {
            signal_type: 'hiring-velocity',
            detected_at: '2026-03-02T00:00:00.000+00:00',
            data: { summary: 's3' },
          }),
        ],
      }),
    );
    const r = await client.enrichCompany({ domain: 'acme.com' });
    expect(r.signals.map((s) => s.signal_id)).toEqual(['sig_1', UUID, 'sig_3']);
    expect(r.signals.map((s) => s.detected_at)).toEqual([
      '2026-03-01T12:00:00.000Z',
      '2026-03-01T12:30:00.250Z',
      '2026-03-02T00:00:00.000Z',
    ]);
    // type-specific data kept as sent (dates inside data are not rewritten)
    expect(r.signals[1]?.data).toEqual({
      summary: 's2',
      filing_date: '2026-02-28',
      metrics: { timeframe: 'next_quarter' },
    });
    // a type without subtypes gets ''
    expect(r.signals[2]?.signal_subtype).toBe('');
    expect(r.credits).toBe(4);
    expect(r.requestId).toBe('req_fixture');
  });

  it('falls back to data.summary for an empty or missing signal_name', async () => {
    bodies.set(
      '/v1/companies/enrich',
      enrichBody({
        signals: [
          signalBody('sig_1', { signal_name: '', data: { summary: 'From summary' } }),
          signalBody('sig_2', { signal_name: '  ', data: { summary: 'Also' } }),
          signalBody('sig_3', { data: { summary: 'Missing' } }),
        ],
      }),
    );
    const r = await client.enrichCompany({ domain: 'acme.com' });
    expect(r.signals.map((s) => s.signal_name)).toEqual(['From summary', 'Also', 'Missing']);
  });

  it('keeps unknown fields at every level and lower-cases domains', async () => {
    bodies.set(
      '/v1/companies/enrich',
      enrichBody({
        company: { name: 'Acme', domain: 'WWW.Acme.COM ', founded: 1999, linkedin_url: null },
        brand_new_top_level: { a: 1 },
        signals: [
          signalBody('sig_1', {
            signal_name: 'x',
            company: { name: 'Acme', domain: 'ACME.com', hq: 'Berlin' },
            data: { summary: 'x', novel: [1, 2] },
            sentiment_v2: 'up',
          }),
        ],
      }),
    );
    const r = await client.enrichCompany({ domain: 'acme.com' });
    expect(r['brand_new_top_level']).toEqual({ a: 1 });
    expect(r.company).toEqual({ name: 'Acme', domain: 'www.acme.com', founded: 1999 });
    expect(r.signals[0]?.['sentiment_v2']).toBe('up');
    expect(r.signals[0]?.company).toEqual({ name: 'Acme', domain: 'acme.com', hq: 'Berlin' });
    expect(r.signals[0]?.data['novel']).toEqual([1, 2]);
  });

  it('leaves optional company fields absent, keeps a null description, adds linkedin_url_absolute', async () => {
    bodies.set(
      '/v1/companies/enrich',
      enrichBody({
        company: { name: 'Acme', domain: 'acme.com', linkedin_url: '/company/acme' },
        signals: [
          signalBody('sig_1', {
            signal_name: 'x',
            company: {
              name: 'Acme',
              domain: 'acme.com',
              linkedin_url: 'https://www.linkedin.com/company/acme',
              industries: ['Software'],
              employee_count_low: '51',
              employee_count_high: 200,
              revenue: '$10M-$50M',
              description: null,
            },
            data: { summary: 'x' },
          }),
          signalBody('sig_2', {
            signal_name: 'y',
            company: { name: 'Acme', domain: 'acme.com' },
            data: { summary: 'y' },
          }),
        ],
      }),
    );
    const r = await client.enrichCompany({ domain: 'acme.com' });
    expect(r.company.linkedin_url).toBe('https://www.linkedin.com/company/acme');
    expect(r.company.linkedin_url_absolute).toBe('https://www.linkedin.com/company/acme');
    expect(r.signals[0]?.company).toEqual({
      name: 'Acme',
      domain: 'acme.com',
      linkedin_url: 'https://www.linkedin.com/company/acme',
      linkedin_url_absolute: 'https://www.linkedin.com/company/acme',
      industries: ['Software'],
      employee_count_low: 51,
      employee_count_high: 200,
      revenue: '$10M-$50M',
      description: null,
    });
    expect(Object.keys(r.signals[1]?.company ?? {})).toEqual(['name', 'domain']);
  });

  it('computes signal_summary when the service omits it', async () => {
    const body = enrichBody();
    delete body['signal_summary'];
    bodies.set('/v1/companies/enrich', body);
    const r = await client.enrichCompany({ domain: 'acme.com' });
    expect(r.signal_summary).toEqual({ news: 1 });
  });

  it('rejects a body without the fields the kit needs with UnexpectedResponseError', async () => {
    bodies.set('/v1/companies/enrich', { signals: [] });
    const err = await client.enrichCompany({ domain: 'acme.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as UnexpectedResponseError).message).toMatch(/company/);
    expect((err as UnexpectedResponseError).requestId).toBe('req_fixture');
  });

  it('getSignal parses the +00:00 form of a lookup', async () => {
    bodies.set(`/v1/signals/${UUID}`, {
      signal_id: UUID,
      signal_type: 'sec-10k',
      signal_subtype: 'annualReport',
      signal_name: '',
      detected_at: '2026-03-01T12:00:00.000+00:00',
      company: { name: 'Acme', domain: 'Acme.com' },
      data: { summary: 'Annual report', highlights: ['a'] },
    });
    const s = await client.getSignal(UUID);
    expect(s.detected_at).toBe('2026-03-01T12:00:00.000Z');
    expect(s.signal_name).toBe('Annual report');
    expect(s.company?.domain).toBe('acme.com');
    expect(s.data['highlights']).toEqual(['a']);
  });
});

describe('other results', () => {
  it('maps the legacy GET form onto the company enrichment result', async () => {
    bodies.set('/v1/companies/enrich', {
      domain: 'Acme.com',
      company: 'Acme Inc',
      industry: 'Software',
      employee_count: 120,
      funding: { total_raised: 5000000, last_round: 'Series A', valuation: null },
      signals: [
        { type: 'news', subtype: 'companyNews', date: '2026-03-02T08:00:00Z', summary: 'News', id: 'sig_9' },
        { type: 'hiring-trends', date: '2026-03-01T08:00:00.000+00:00', summary: 'Hiring', trending_titles: ['SRE'] },
      ],
      signal_count: 7,
      last_updated: '2026-03-02T09:00:00Z',
    });
    const r = await client.enrichCompanyLegacy({ domain: 'acme.com' });
    expect(server.requests.at(-1)?.method).toBe('GET');
    expect(server.requests.at(-1)?.url).toBe('/v1/companies/enrich?domain=acme.com');
    expect(r.company).toEqual({
      name: 'Acme Inc',
      domain: 'acme.com',
      industries: ['Software'],
      employee_count: 120,
      funding: { total_raised: 5000000, last_round: 'Series A', valuation: null },
    });
    expect(r.signals[0]).toMatchObject({
      signal_id: 'sig_9',
      signal_type: 'news',
      signal_subtype: 'companyNews',
      signal_name: 'News',
      detected_at: '2026-03-02T08:00:00.000Z',
      data: { summary: 'News' },
    });
    expect(r.signals[1]?.signal_id).toBe('legacy:acme.com:1');
    expect(r.signals[1]?.data).toEqual({ summary: 'Hiring', trending_titles: ['SRE'] });
    expect(r.signal_summary).toEqual({ news: 1, 'hiring-trends': 1 });
    expect(r.coverage).toEqual({
      total_before_filters: 7,
      total_after_filters: 2,
      signal_types_available: ['news', 'hiring-trends'],
      date_range: { earliest: '2026-03-01T08:00:00.000Z', latest: '2026-03-02T08:00:00.000Z' },
    });
    expect(r.legacy['signal_count']).toBe(7);
    expect(r.credits).toBe(4);
  });

  it('parses bulk results of every status and fills a missing summary', async () => {
    bodies.set('/v1/companies/enrich/bulk', {
      results: [
        { domain: 'ACME.com', status: 'ok', ...enrichBody() },
        { domain: 'nowhere.example', status: 'not_found' },
        { domain: 'bad..domain', status: 'error', error: { code: 'invalid_domain', message: 'bad' } },
      ],
    });
    const r = await client.enrichCompanies({ domains: ['ACME.com', 'nowhere.example', 'bad..domain'] });
    expect(r.results.map((x) => [x.domain, x.status])).toEqual([
      ['acme.com', 'ok'],
      ['nowhere.example', 'not_found'],
      ['bad..domain', 'error'],
    ]);
    const ok = r.results[0];
    if (ok?.status !== 'ok') throw new Error('expected ok');
    expect(ok.signals[0]?.detected_at).toBe('2026-03-01T12:00:00.000Z');
    const failed = r.results[2];
    if (failed?.status !== 'error') throw new Error('expected error');
    expect(failed.error).toEqual({ code: 'invalid_domain', message: 'bad' });
    expect(r.summary).toEqual({ requested: 3, ok: 1, not_found: 1, error: 1, signals: 1 });
  });

  it('rejects a bulk answer with one bad signal, naming the field, with UnexpectedResponseError', async () => {
    const ok: Record<string, unknown> = { domain: 'acme.com', status: 'ok', ...enrichBody() };
    const signals = ok['signals'] as Record<string, unknown>[];
    signals[0] = { ...signals[0], detected_at: 'last tuesday' };
    bodies.set('/v1/companies/enrich/bulk', { results: [{ domain: 'x.io', status: 'not_found' }, ok] });
    const err = await client.enrichCompanies({ domains: ['x.io', 'acme.com'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as UnexpectedResponseError).message).toContain('results.1.signals.0.detected_at');
    expect((err as UnexpectedResponseError).creditsCharged).toBe(4);
  });

  it('verifyEmail accepts { result } and a bare verification', async () => {
    const verification = {
      email: 'a@gmial.com',
      result: 'risky',
      confidence: 0.4,
      reason: 'typo',
      risk_level: 'high',
      details: { is_free_provider: false, suggested_correction: 'a@gmail.com', domain_age_days: null },
      validated_at: '2026-03-01T12:00:00.000+00:00',
    };
    bodies.set('/v1/emails/verify', { result: verification });
    const a = await client.verifyEmail({ email: 'a@gmial.com' });
    bodies.set('/v1/emails/verify', verification);
    const b = await client.verifyEmail({ email: 'a@gmial.com' });
    for (const r of [a, b]) {
      expect(r.result.result).toBe('risky');
      expect(r.result.validated_at).toBe('2026-03-01T12:00:00.000Z');
      expect(r.result.details).toEqual({ is_free_provider: false, suggested_correction: 'a@gmail.com' });
    }
  });

  it('buyer-intent items keep a null email_validation_status and a null next_cursor', async () => {
    bodies.set('/v1/buyer-intent/contacts', {
      contacts: [
        {
          topic_id: 'b2b_7',
          intent_score: '87.5',
          contact: {
            first_name: 'Ada',
            email: 'ada@x.io',
            email_validation_status: null,
            linkedin_url: '/in/ada',
            mobile_phone: '+1',
          },
          company: { name: 'X', domain: 'X.io', industry: 'Software', revenue_bucket: '$1M-$10M' },
        },
      ],
      count: 1,
      page_size: 50,
      next_cursor: null,
    });
    const page = await client.buyerIntentContacts({ topic_ids: ['b2b_7'], page_size: 50 });
    expect(page.next_cursor).toBeNull();
    expect(page.contacts[0]).toEqual({
      topic_id: 'b2b_7',
      intent_score: 87.5,
      contact: {
        email_validation_status: null,
        first_name: 'Ada',
        email: 'ada@x.io',
        mobile_phone: '+1',
        linkedin_url: 'https://www.linkedin.com/in/ada',
        linkedin_url_absolute: 'https://www.linkedin.com/in/ada',
      },
      company: { name: 'X', domain: 'x.io', industry: 'Software', revenue_bucket: '$1M-$10M' },
    });
  });

  it('export jobs accept `id` for `export_id` and a string error', async () => {
    bodies.set('/v1/buyer-intent/exports/exp_1', {
      id: 'exp_1',
      status: 'failed',
      error: 'upstream broke',
      created_at: 1772366400,
    });
    const r = await client.getIntentExport('exp_1');
    expect(r).toMatchObject({
      export_id: 'exp_1',
      status: 'failed',
      error: { code: 'export_failed', message: 'upstream broke' },
      created_at: '2026-03-01T12:00:00.000Z',
    });
  });

  it('signal types accept a bare array and subtype objects', async () => {
    bodies.set('/v1/signals/types', [{ signal_type: 'news', subtypes: ['companyNews', { name: 'acquires' }] }]);
    const r = await client.listSignalTypes();
    expect(r.types).toEqual([{ signal_type: 'news', subtypes: ['companyNews', 'acquires'] }]);
  });
});
