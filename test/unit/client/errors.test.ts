import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  InsufficientCreditsError,
  isRetryable,
  NetworkError,
  NotFoundError,
  parseRetryAfter,
  RateLimitedError,
  retryAfterMsOf,
  ServerError,
  SignalApiError,
  SignalClient,
  UnexpectedResponseError,
  ValidationError,
} from '../../../connectors/signal-api/index.ts';
import { sendError, sendJson, startTestServer, type TestServer } from './server.ts';

const API_KEY = 'sk_live_super_secret_key';
let server: TestServer;
let client: SignalClient;
let respond: (res: ServerResponse) => void = (res) => res.end();

beforeAll(async () => {
  server = await startTestServer((_req, res) => respond(res));
  client = new SignalClient({ baseUrl: server.url, apiKey: API_KEY, retry: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

async function failure(r: (res: ServerResponse) => void): Promise<SignalApiError> {
  respond = r;
  const err = await client.enrichCompany({ domain: 'acme.com' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SignalApiError);
  return err as SignalApiError;
}

describe('error mapping', () => {
  /** Each error class, whether it is retried, and the answers (status → error code) that map to it. */
  const classes: { Cls: new (...a: never[]) => SignalApiError; retryable: boolean; answers: Record<number, string> }[] =
    [
      { Cls: ValidationError, retryable: false, answers: { 400: 'invalid_json', 422: 'validation_error' } },
      { Cls: AuthenticationError, retryable: false, answers: { 401: 'unauthorized', 403: 'forbidden' } },
      { Cls: InsufficientCreditsError, retryable: false, answers: { 402: 'insufficient_credits' } },
      { Cls: NotFoundError, retryable: false, answers: { 404: 'not_found', 410: 'gone' } },
      { Cls: RateLimitedError, retryable: true, answers: { 429: 'rate_limited' } },
      { Cls: ServerError, retryable: true, answers: { 500: 'internal_error', 502: 'bad_gateway', 503: 'unavailable' } },
      { Cls: SignalApiError, retryable: false, answers: { 409: 'conflict' } },
    ];
  const table = classes.flatMap(({ Cls, retryable, answers }) =>
    Object.entries(answers).map(([status, code]) => [Number(status), code, Cls, retryable] as const),
  );
  for (const [status, code, Cls, retryable] of table) {
    it(`${status} with a JSON error body → ${Cls.name}`, async () => {
      const err = await failure((res) =>
        sendError(res, status, code, `something about ${code}`, {
          field: 'domain',
          headers: { 'x-request-id': 'req_h' },
        }),
      );
      expect(err).toBeInstanceOf(Cls);
      expect(err.status).toBe(status);
      expect(err.code).toBe(code);
      expect(err.field).toBe('domain');
      expect(err.requestId).toBe('req_h');
      expect(err.message).toContain(`something about ${code}`);
      expect(err.message).toContain('POST /v1/companies/enrich');
      expect(isRetryable(err)).toBe(retryable);
    });
  }

  it('an HTML 502 page gives a ServerError with a readable message', async () => {
    const err = await failure((res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(
        '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>',
      );
    });
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe('bad_gateway');
    expect(err.message).toBe(
      'POST /v1/companies/enrich failed with 502 Bad Gateway: HTML error page "502 Bad Gateway"',
    );
    expect(err.requestId).toBeUndefined();
  });

  it('an empty body still gives the typed error', async () => {
    const e503 = await failure((res) => {
      res.writeHead(503);
      res.end();
    });
    expect(e503).toBeInstanceOf(ServerError);
    expect(e503.code).toBe('unavailable');
    expect(e503.message).toBe('POST /v1/companies/enrich failed with 503 Service Unavailable: empty response body');
    const e401 = await failure((res) => {
      res.writeHead(401);
      res.end();
    });
    expect(e401).toBeInstanceOf(AuthenticationError);
    expect(e401.code).toBe('unauthorized');
  });

  it('a plain-text body is quoted', async () => {
    const err = await failure((res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('upstream   exploded\n');
    });
    expect(err.message).toMatch(/500 Internal Server Error: "upstream exploded"$/);
  });

  it('other error body shapes: { error: "msg" }, { message, code }, { detail }', async () => {
    const a = await failure((res) => sendJson(res, 422, { error: 'domain is required' }));
    expect(a.message).toMatch(/domain is required/);
    const b = await failure((res) => sendJson(res, 422, { code: 'bad', message: 'nope', field: 'limit' }));
    expect([b.code, b.field]).toEqual(['bad', 'limit']);
    const c = await failure((res) => sendJson(res, 422, { detail: [{ loc: ['body', 'limit'], msg: 'too big' }] }));
    expect(c.message).toMatch(/too big/);
    const d = await failure((res) => sendJson(res, 400, { errors: [{ message: 'x wrong', field: 'x' }] }));
    expect([d.field, d.message.endsWith('x wrong')]).toEqual(['x', true]);
  });

  it('uses error.request_id when the header is missing', async () => {
    const err = await failure((res) => {
      const body = JSON.stringify({ error: { code: 'not_found', message: 'no', request_id: 'req_in_body' } });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(body);
    });
    expect(err.requestId).toBe('req_in_body');
  });

  it('Retry-After in seconds and as an HTTP date', async () => {
    const s = await failure((res) =>
      sendError(res, 429, 'rate_limited', 'slow down', { headers: { 'retry-after': '7' } }),
    );
    expect(s).toBeInstanceOf(RateLimitedError);
    expect((s as RateLimitedError).retryAfterMs).toBe(7000);
    expect(retryAfterMsOf(s)).toBe(7000);
    const when = new Date(Date.now() + 30_000).toUTCString();
    const d = await failure((res) =>
      sendError(res, 429, 'rate_limited', 'slow down', { headers: { 'retry-after': when } }),
    );
    const ms = (d as RateLimitedError).retryAfterMs ?? -1;
    expect(ms).toBeGreaterThan(28_000);
    expect(ms).toBeLessThanOrEqual(30_000);
    const none = await failure((res) => sendError(res, 429, 'rate_limited', 'slow down'));
    expect((none as RateLimitedError).retryAfterMs).toBeUndefined();
    const e503 = await failure((res) =>
      sendError(res, 503, 'unavailable', 'later', { headers: { 'retry-after': '2' } }),
    );
    expect(retryAfterMsOf(e503)).toBe(2000);
  });

  it('parseRetryAfter', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('a cut-off 2xx JSON body is a retryable NetworkError', async () => {
    const err = await failure((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_cut' });
      res.end('{"company":{"name":"Ac');
    });
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('malformed_body');
    expect(err.status).toBe(200);
    expect(err.requestId).toBe('req_cut');
    expect(isRetryable(err)).toBe(true);
  });

  it('a socket destroyed mid-body is a retryable NetworkError', async () => {
    const err = await failure((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"company":');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    expect(err).toBeInstanceOf(NetworkError);
    expect(['connection_reset', 'truncated_body']).toContain(err.code);
    expect(isRetryable(err)).toBe(true);
  });

  it('a reset without an answer is a NetworkError', async () => {
    const err = await failure((res) => res.socket?.destroy());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('connection_reset');
  });

  it('complete JSON of the wrong shape is an UnexpectedResponseError, not retryable', async () => {
    const err = await failure((res) => sendJson(res, 200, { company: 'not an object' }));
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect(isRetryable(err)).toBe(false);
  });

  it('never puts the API key in an error, even when the server echoes it', async () => {
    const err = await failure((res) => sendError(res, 401, 'unauthorized', `unknown key ${API_KEY}`));
    expect(err.message).not.toContain(API_KEY);
    expect(err.message).toContain('[redacted]');
    expect(JSON.stringify(err)).not.toContain(API_KEY);
    expect(String(err.stack)).not.toContain(API_KEY);
  });
});

describe('isRetryable', () => {
  it('classifies raw socket errors and unknown values', () => {
    expect(isRetryable(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isRetryable(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }))).toBe(true);
    expect(isRetryable(new TypeError('bug'))).toBe(false);
    expect(isRetryable('nope')).toBe(false);
    expect(isRetryable(new ValidationError({ status: 0, code: 'validation_error', message: 'x' }))).toBe(false);
  });
});
