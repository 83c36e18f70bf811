import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  NetworkError,
  NotFoundError,
  SignalApiError,
  SignalClient,
  UnexpectedResponseError,
} from '../../../connectors/signal-api/index.ts';
import { enrichBody, type RecordedRequest, sendError, sendJson, startTestServer, type TestServer } from './server.ts';

const API_KEY = 'sk_test_transport';
const JSONL = '{"topic_id":"b2b_1","intent_score":90}\n{"topic_id":"b2b_1","intent_score":80}\n';

let api: TestServer;
let files: TestServer;
let route: (req: RecordedRequest, res: ServerResponse) => void;
let flakyCuts = 0;

function pageOf(n: number, cursor: string | null) {
  return {
    contacts: [{ topic_id: 'b2b_1', intent_score: n, contact: { email: `c${n}@x.io` }, company: { domain: 'x.io' } }],
    count: 1,
    page_size: 1,
    next_cursor: cursor,
  };
}

beforeAll(async () => {
  api = await startTestServer((req, res) => route(req, res));
  files = await startTestServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/gone.jsonl') return sendError(res, 410, 'gone', 'link expired');
    if (url.pathname === '/bad-sig.jsonl') return sendError(res, 403, 'forbidden', 'bad signature');
    if (url.pathname === '/cut.jsonl') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': JSONL.length * 10 });
      res.write(JSONL);
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    if (url.pathname.startsWith('/flaky') && flakyCuts > 0) {
      flakyCuts--;
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': JSONL.length });
      res.write(JSONL.slice(0, 10));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    const range = url.pathname.includes('norange') ? null : /^bytes=(\d+)-$/.exec(String(req.headers['range'] ?? ''));
    if (range) {
      const start = Number(range[1]);
      const part = JSONL.slice(start);
      res.writeHead(206, {
        'content-type': 'application/x-ndjson',
        'content-length': part.length,
        'content-range': `bytes ${start}-${JSONL.length - 1}/${JSONL.length}`,
      });
      res.end(part);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': JSONL.length });
    res.end(JSONL);
  });
});

beforeEach(() => {
  api.requests.length = 0;
  files.requests.length = 0;
  route = (_req, res) => sendJson(res, 200, enrichBody(), { 'x-credits-charged': '2', 'x-credits-remaining': '998' });
});

afterAll(async () => {
  await api.close();
  await files.close();
});

describe('requests', () => {
  it('sends the key as X-API-KEY by default and as a Bearer token on request', async () => {
    const a = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    await a.enrichCompany({ domain: 'acme.com' });
    expect(api.requests[0]?.headers['x-api-key']).toBe(API_KEY);
    expect(api.requests[0]?.headers['authorization']).toBeUndefined();
    await a.close();
    const b = new SignalClient({ baseUrl: api.url, apiKey: API_KEY, auth: 'bearer' });
    await b.enrichCompany({ domain: 'acme.com' });
    expect(api.requests[1]?.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(api.requests[1]?.headers['x-api-key']).toBeUndefined();
    await b.close();
  });

  it('posts JSON with spec field names; Dates and ISO strings become UTC Z', async () => {
    const c = new SignalClient({ baseUrl: `${api.url}/`, apiKey: API_KEY });
    const r = await c.enrichCompany({
      domain: 'acme.com',
      signal_types: ['news'],
      detected_after: new Date('2026-01-01T00:00:00Z'),
      limit: 10,
    });
    const req = api.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/companies/enrich');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.json).toEqual({
      domain: 'acme.com',
      signal_types: ['news'],
      detected_after: '2026-01-01T00:00:00.000Z',
      limit: 10,
    });
    expect([r.credits, r.requestId, r.creditsRemaining]).toEqual([2, 'req_test', 998]);
    await c.enrichCompany({ domain: 'a.com', detected_after: '2026-01-01T02:00:00+02:00' });
    expect((api.requests[1]?.json as Record<string, unknown> | undefined)?.['detected_after']).toBe(
      '2026-01-01T00:00:00.000Z',
    );
    await c.close();
  });

  it('keeps a base URL path prefix', async () => {
    const c = new SignalClient({ baseUrl: `${api.url}/proxy/signal/`, apiKey: API_KEY });
    await c.enrichCompany({ domain: 'acme.com' });
    expect(api.requests[0]?.url).toBe('/proxy/signal/v1/companies/enrich');
    await c.close();
  });

  it('reports 0 credits when x-credits-charged is absent and no requestId when none is sent', async () => {
    route = (_req, res) => {
      const body = JSON.stringify(enrichBody());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const r = await c.enrichCompany({ domain: 'acme.com' });
    expect(r.credits).toBe(0);
    expect('requestId' in r).toBe(false);
    await c.close();
  });

  it('reuses keep-alive connections and closes them', async () => {
    const before = api.connections();
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    for (let i = 0; i < 20; i++) await c.enrichCompany({ domain: 'acme.com' });
    // a socket is handed back to the pool a tick after the body is read, so a back-to-back call may open a second
    expect(api.connections() - before).toBeLessThanOrEqual(2);
    await c.close();
    await expect(c.enrichCompany({ domain: 'acme.com' })).rejects.toThrow(/closed/);
  });

  it('uses each endpoint path and method', async () => {
    route = (req, res) => {
      const path = req.url.split('?')[0];
      const bodies: Record<string, unknown> = {
        '/v1/contacts/enrich': { contact: { email: 'a@b.co' }, contact_signals: [], signal_summary: {}, total: 0 },
        '/v1/companies/search': { companies: [{ name: 'A', domain: 'A.com', signal_count: 3 }], count: 1 },
        '/v1/contacts/search': { contacts: [], count: 0 },
        '/v1/signals/types': { types: [] },
        '/v1/stats': { total_signals: 5, generated_at: '2026-03-01T12:00:00+00:00' },
        '/v1/buyer-intent/topics': { topics: [{ topic_id: 'b2b_1', name: 'CRM' }], next_cursor: null },
        '/v1/emails/verify/bulk': { verifications: [], summary: null, errors: [] },
        '/v1/webhooks':
          req.method === 'POST'
            ? { webhook_id: 'wh_1', url: 'http://h', signal_types: ['news'], status: 'active', secret: 'whsec_x' }
            : { webhooks: [{ webhook_id: 'wh_1', url: 'http://h', signal_types: ['news'], status: 'active' }] },
        '/v1/webhooks/wh_1':
          req.method === 'DELETE'
            ? { webhook_id: 'wh_1', deleted: true }
            : { webhook_id: 'wh_1', url: 'http://h', signal_types: ['news'], status: 'paused' },
        '/v1/webhooks/wh_1/test': { delivered: true, status_code: 200, attempts: 1 },
      };
      sendJson(res, req.method === 'POST' && path === '/v1/webhooks' ? 201 : 200, bodies[path ?? ''] ?? {});
    };
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    await c.enrichContact({ contact_email: 'a@b.co' });
    const search = await c.searchCompanies({ industries: ['Software'], content_filters: { technologies: ['k8s'] } });
    expect(search.companies[0]?.domain).toBe('a.com');
    await c.searchContacts({ seniority: ['Vp'], job_title: 'CTO' });
    await c.listSignalTypes();
    const stats = await c.getStats();
    expect(stats.generated_at).toBe('2026-03-01T12:00:00.000Z');
    await c.searchTopics({ q: 'crm tools', limit: 5 });
    const v = await c.verifyEmails({ emails: ['a@b.co'] });
    expect(v.summary).toEqual({ total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 });
    const wh = await c.createWebhook({ url: 'http://h', signal_types: ['news'] });
    expect(wh.secret).toBe('whsec_x');
    expect((await c.updateWebhook('wh_1', { status: 'paused' })).status).toBe('paused');
    expect((await c.testWebhook('wh_1')).delivered).toBe(true);
    expect((await c.listWebhooks()).webhooks).toHaveLength(1);
    expect((await c.deleteWebhook('wh_1')).deleted).toBe(true);
    expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1/contacts/enrich',
      'POST /v1/companies/search',
      'POST /v1/contacts/search',
      'GET /v1/signals/types',
      'GET /v1/stats',
      'GET /v1/buyer-intent/topics?q=crm+tools&limit=5',
      'POST /v1/emails/verify/bulk',
      'POST /v1/webhooks',
      'PATCH /v1/webhooks/wh_1',
      'POST /v1/webhooks/wh_1/test',
      'GET /v1/webhooks',
      'DELETE /v1/webhooks/wh_1',
    ]);
    await c.close();
  });
});

describe('pagination', () => {
  it('follows next_cursor to the end, with the same arguments', async () => {
    route = (req, res) => {
      const cursor = (req.json as { cursor?: string }).cursor;
      const n = cursor ? Number(cursor.slice(1)) : 0;
      sendJson(res, 200, pageOf(n, n < 4 ? `c${n + 1}` : null), { 'x-credits-charged': '1' });
    };
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const seen: number[] = [];
    for await (const item of c.iterateBuyerIntentContacts({
      topic_ids: ['b2b_1'],
      page_size: 1,
      email_validated: true,
    })) {
      seen.push(item.intent_score);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(api.requests.map((r) => r.json)).toEqual([
      { topic_ids: ['b2b_1'], page_size: 1, email_validated: true },
      { topic_ids: ['b2b_1'], page_size: 1, email_validated: true, cursor: 'c1' },
      { topic_ids: ['b2b_1'], page_size: 1, email_validated: true, cursor: 'c2' },
      { topic_ids: ['b2b_1'], page_size: 1, email_validated: true, cursor: 'c3' },
      { topic_ids: ['b2b_1'], page_size: 1, email_validated: true, cursor: 'c4' },
    ]);
    let credits = 0;
    for await (const page of c.iterateBuyerIntentContactPages({ topic_ids: ['b2b_1'], cursor: 'c3' })) {
      credits += page.credits;
    }
    expect(credits).toBe(2);
    await c.close();
  });

  it('stops with an error when the server repeats a cursor', async () => {
    route = (_req, res) => sendJson(res, 200, pageOf(1, 'same'));
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const pages: unknown[] = [];
    const err = await (async () => {
      for await (const page of c.iterateBuyerIntentContactPages({ topic_ids: ['b2b_1'] })) pages.push(page);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect(pages).toHaveLength(2);
    await c.close();
  });

  it('iterates topics by query-string cursor', async () => {
    route = (req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      sendJson(res, 200, {
        topics: [{ topic_id: cursor ? 'b2b_2' : 'b2b_1', name: 't' }],
        next_cursor: cursor ? null : 'next',
      });
    };
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const ids: string[] = [];
    for await (const t of c.iterateTopics({ q: 'crm' })) ids.push(t.topic_id);
    expect(ids).toEqual(['b2b_1', 'b2b_2']);
    expect(api.requests.map((r) => r.url)).toEqual([
      '/v1/buyer-intent/topics?q=crm',
      '/v1/buyer-intent/topics?q=crm&cursor=next',
    ]);
    await c.close();
  });
});

describe('downloads', () => {
  it('streams the JSONL from the signed URL without the API key', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const d = await c.downloadIntentExport({
      export_id: 'exp_1',
      download_url: `${files.url}/exports/exp_1.jsonl?sig=abc`,
    });
    expect(d.contentLength).toBe(JSONL.length);
    expect(d.contentType).toBe('application/x-ndjson');
    expect([d.offset, d.status, d.credits]).toEqual([0, 200, 0]);
    expect(await text(d.body)).toBe(JSONL);
    const req = files.requests[0];
    expect(req?.url).toBe('/exports/exp_1.jsonl?sig=abc');
    expect(req?.headers['x-api-key']).toBeUndefined();
    expect(req?.headers['authorization']).toBeUndefined();
    expect(JSON.stringify(req?.headers)).not.toContain(API_KEY);
    await c.close();
  });

  it('also as a web stream', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const d = await c.downloadIntentExport(`${files.url}/x.jsonl`);
    expect(await new Response(d.stream()).text()).toBe(JSONL);
    await c.close();
  });

  it('looks the export up by id, and refuses one that is not ready', async () => {
    let status = 'running';
    route = (_req, res) =>
      sendJson(res, 200, {
        export_id: 'exp_9',
        status,
        download_url: status === 'ready' ? `${files.url}/exp_9.jsonl` : undefined,
      });
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const err = await c.downloadIntentExport('exp_9').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignalApiError);
    expect((err as SignalApiError).code).toBe('export_running');
    status = 'ready';
    const d = await c.downloadIntentExport('exp_9');
    expect(await text(d.body)).toBe(JSONL);
    await c.close();
  });

  it('a body cut short errors with NetworkError truncated_body', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const d = await c.downloadIntentExport(`${files.url}/cut.jsonl`);
    const err = await text(d.body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('truncated_body');
    expect((err as NetworkError).message).toMatch(/cut off after \d+ of \d+ bytes/);
    await c.close();
  });

  it('with retries on, a cut-off body is resumed by Range, or re-read skipping what was passed on', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    flakyCuts = 2;
    const a = await c.downloadIntentExport(`${files.url}/flaky.jsonl`);
    expect(await text(a.body)).toBe(JSONL);
    expect(files.requests.map((r) => r.headers['range'])).toEqual([undefined, 'bytes=10-', 'bytes=10-']);
    files.requests.length = 0;
    flakyCuts = 1;
    const b = await c.downloadIntentExport(`${files.url}/flaky-norange.jsonl`);
    expect(await text(b.body)).toBe(JSONL);
    expect(files.requests).toHaveLength(2);
    await c.close();
  });

  it('with retries off, a cut-off body errors at once', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY, retry: false });
    flakyCuts = 1;
    const d = await c.downloadIntentExport(`${files.url}/flaky.jsonl`);
    const err = await text(d.body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('truncated_body');
    expect(files.requests).toHaveLength(1);
    await c.close();
  });

  it('a consumer that stops early releases the download', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const d = await c.downloadIntentExport(`${files.url}/x.jsonl`);
    d.body.destroy();
    // The body's stream closes (its connection is released) rather than waiting for the rest of the file.
    await once(d.body, 'close');
    expect(d.body.readableEnded).toBe(false);
    await c.close();
  });

  it('resumes with Range', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const first = JSONL.indexOf('\n') + 1;
    const d = await c.downloadIntentExport(`${files.url}/x.jsonl`, { offset: first });
    expect([d.status, d.offset, d.totalLength]).toEqual([206, first, JSONL.length]);
    expect(await text(d.body)).toBe(JSONL.slice(first));
    await c.close();
  });

  it('an expired link is NotFoundError gone, a bad signature AuthenticationError', async () => {
    const c = new SignalClient({ baseUrl: api.url, apiKey: API_KEY });
    const gone = await c.downloadIntentExport(`${files.url}/gone.jsonl`).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect([(gone as NotFoundError).status, (gone as NotFoundError).code]).toEqual([410, 'gone']);
    const bad = await c.downloadIntentExport(`${files.url}/bad-sig.jsonl`).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect(files.requests).toHaveLength(2);
    await c.close();
  });
});
