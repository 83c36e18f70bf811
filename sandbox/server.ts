/**
 * The HTTP server: routing, then for every API call the same pipeline: authentication (401), fault bursts and
 * the account rate limit (429), injected faults, body parsing (400/413), the route's handler (which validates,
 * works and charges), and the common headers (`x-request-id`, `x-credits-charged`, `x-credits-remaining`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiContext, ApiRequest, ApiResponse, Route } from './api.ts';
import { extractApiKey } from './auth.ts';
import { ApiError, errorBody, insufficientCredits, invalidJson, notFound, unauthorized } from './errors.ts';
import { hash2, hashString, hex8 } from './random.ts';
import type { RateLimiter } from './rate-limit.ts';
import { iso } from './time.ts';
import type { CallRecord } from './truth.ts';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  route: Route;
  regex: RegExp;
  keys: string[];
}

function compile(route: Route): CompiledRoute {
  const keys: string[] = [];
  const pattern = route.path
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) {
        keys.push(seg.slice(1));
        return '([^/]+)';
      }
      return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { route, regex: new RegExp(`^${pattern}/?$`), keys };
}

const HTML_PAGES: Record<number, string> = {
  500: '<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>',
  502: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
  503: '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>',
};
const FAULT_CODES = { 500: 'internal_error', 502: 'bad_gateway', 503: 'unavailable' } as const;
const MALFORMED_BODY = '{"signals":[{"signal_id":"sig_0f3a9c","signal_type":"news","data":{"summary":"Acme ann';

export interface ServerDeps {
  ctx: ApiContext;
  routes: Route[];
  limiter: RateLimiter;
  seed: number;
}

export interface SandboxServer {
  server: Server;
  /** Destroys every open socket and cancels pending work. */
  closeAll(): void;
}

export function createSandboxServer(deps: ServerDeps): SandboxServer {
  const { ctx, limiter } = deps;
  const compiled = deps.routes.map(compile);
  const sockets = new Set<Socket>();
  const abort = new AbortController();
  const requestSalt = hashString('requests', deps.seed);
  let requestCounter = 0;
  let apiCounter = 0;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (ms <= 0 || abort.signal.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        abort.signal.removeEventListener('abort', done);
        resolve();
      }
      abort.signal.addEventListener('abort', done, { once: true });
    });

  /**
   * A JSON object's text with a `sandbox_padding` field of small objects added, to about `bytes` in all (the
   * `answerPaddingBytes` fault): a very large answer that stays valid. Anything else is left as it is.
   */
  function padded(json: string, bytes: number): string {
    if (bytes <= 0 || !json.startsWith('{') || json === '{}') return json;
    const item = (i: number) => `{"i":${i},"note":"sandbox padding"}`;
    const items: string[] = [];
    let size = json.length;
    for (let i = 0; size < bytes; i++) {
      const next = item(i);
      items.push(next);
      size += next.length + 1;
    }
    return `{"sandbox_padding":[${items.join(',')}],${json.slice(1)}`;
  }

  /** The `answerNul` fault: a NUL escape at the start of every `summary` and in a field of every `data` object. */
  function withNul(json: string): string {
    return json
      .replace(/"summary":"/g, '"summary":"\\u0000')
      .replace(/"data":\{(\}?)/g, (_, close: string) => `"data":{"sandbox_note":"a\\u0000b"${close ? '}' : ','}`);
  }

  function send(
    res: ServerResponse,
    status: number,
    payload: string,
    headers: Record<string, string | number>,
    contentType = 'application/json',
  ): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(payload),
      ...headers,
    });
    res.end(payload);
  }

  function readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          reject(new ApiError(413, 'payload_too_large', `request bodies are limited to ${MAX_BODY_BYTES} bytes`));
          req.resume();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  }

  function match(
    method: string,
    path: string,
  ): { hit?: CompiledRoute; params: Record<string, string>; allowed: string[] } {
    const allowed: string[] = [];
    for (const c of compiled) {
      const m = c.regex.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      c.keys.forEach((k, i) => {
        params[k] = decodeURIComponent(m[i + 1]!);
      });
      if (c.route.method === method || (method === 'HEAD' && c.route.raw && c.route.method === 'GET')) {
        return { hit: c, params, allowed };
      }
      allowed.push(c.route.method);
    }
    return { params: {}, allowed };
  }

  /** Handles one request and fills in `rec`, its entry in the call record (left undefined for /healthz). */
  async function handle(req: IncomingMessage, res: ServerResponse, rec: { call?: CallRecord }): Promise<void> {
    const requestId = `req_${hex8(hash2(requestSalt, ++requestCounter))}${hex8(requestCounter)}`;
    const base: Record<string, string | number> = { 'x-request-id': requestId, 'x-credits-charged': '0' };
    const url = new URL(req.url ?? '/', 'http://sandbox.local');
    const method = req.method ?? 'GET';
    if (url.pathname === '/healthz' && method === 'GET') {
      return send(res, 200, JSON.stringify({ ok: true }), base);
    }
    const call: CallRecord = {
      seq: ctx.calls.next(),
      realMs: performance.now(),
      at: iso(ctx.clock()),
      method,
      path: url.pathname,
      account: undefined,
      requestId,
      status: null,
      rateCounted: false,
      credits: 0,
      fault: null,
      asked: undefined,
      returned: undefined,
    };
    rec.call = call;
    const fail = (err: ApiError, extra: Record<string, string | number> = {}): void => {
      call.status = err.status;
      send(res, err.status, JSON.stringify(errorBody(err, requestId)), { ...base, ...extra, ...err.headers });
    };
    let params: Record<string, string>;
    let hit: CompiledRoute | undefined;
    try {
      const found = match(method, url.pathname);
      hit = found.hit;
      params = found.params;
      if (!hit) {
        if (found.allowed.length > 0) {
          return fail(new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`), {
            allow: [...new Set(found.allowed)].join(', '),
          });
        }
        return fail(notFound(`no endpoint ${method} ${url.pathname}`));
      }
    } catch {
      return fail(notFound(`no endpoint ${method} ${url.pathname}`));
    }
    const route = hit.route;
    if (route.raw) {
      const outcome = await route.raw(req, res, ctx, { requestId, params, query: url.searchParams });
      call.status = res.statusCode;
      if (outcome) {
        call.fault = outcome.fault ?? null;
        call.asked = outcome.asked;
        call.returned = outcome.returned;
      }
      return;
    }

    // Authentication
    const key = extractApiKey(req.headers);
    const account = ctx.accounts.accountFor(key);
    call.account = account;
    if (!key || !account) {
      await sleep(ctx.faults.latencyMs);
      return fail(unauthorized(key ? 'unknown API key' : 'missing API key (X-API-KEY or Authorization: Bearer)'), {
        'www-authenticate': 'Bearer',
      });
    }
    const authed = (): Record<string, string | number> => ({
      ...base,
      'x-credits-remaining': ctx.ledger.balance(account),
    });

    // Faults are drawn before the rate limit so a burst 429 does not use a slot; both before any work.
    const fault = ctx.faults.decide();
    if (fault.kind === 'rate_limited') {
      call.fault = 'rate_limited_burst';
      await sleep(ctx.faults.latencyMs);
      return fail(new ApiError(429, 'rate_limited', 'rate limit burst (sandbox fault)'), {
        ...authed(),
        'retry-after': String(fault.retryAfterS),
      });
    }
    call.realMs = performance.now();
    const rate = limiter.take(account);
    if (!rate.ok) {
      await sleep(ctx.faults.latencyMs);
      const seconds = Math.max(1, Math.ceil(rate.retryAfterMs / 1000));
      return fail(
        new ApiError(
          429,
          'rate_limited',
          `rate limit of ${limiter.limit} requests per ${limiter.windowMs / 1000} s exceeded for this account`,
        ),
        { ...authed(), 'retry-after': String(seconds), 'x-ratelimit-limit': limiter.limit, 'x-ratelimit-remaining': 0 },
      );
    }
    call.rateCounted = limiter.enabled;
    const rateHeaders: Record<string, string | number> = limiter.enabled
      ? { 'x-ratelimit-limit': limiter.limit, 'x-ratelimit-remaining': rate.remaining }
      : {};
    if (fault.kind === 'reset') {
      call.fault = 'reset';
      req.socket.destroy();
      return;
    }
    await sleep(ctx.faults.latencyMs);
    if (fault.kind === 'error') {
      call.fault = 'error';
      call.status = fault.status;
      const headers = { ...authed(), ...rateHeaders, ...(fault.status === 503 ? { 'retry-after': '1' } : {}) };
      if (fault.html) return send(res, fault.status, HTML_PAGES[fault.status]!, headers, 'text/html');
      return fail(
        new ApiError(fault.status, FAULT_CODES[fault.status], 'injected server error (sandbox fault)'),
        headers,
      );
    }
    if (fault.kind === 'malformed') {
      call.fault = 'malformed';
      call.status = 200;
      return send(res, 200, MALFORMED_BODY, { ...authed(), ...rateHeaders });
    }

    // Body
    let body: unknown;
    try {
      const raw = await readBody(req);
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch (e) {
          throw invalidJson(`request body is not valid JSON: ${(e as Error).message}`);
        }
      } else if (method === 'POST' || method === 'PATCH') {
        if (!route.path.endsWith('/test')) throw invalidJson('request body is empty; expected a JSON object');
      }
    } catch (e) {
      return fail(e instanceof ApiError ? e : invalidJson(), { ...authed(), ...rateHeaders });
    }

    // Handler
    let charged = 0;
    const now = ctx.clock();
    const apiReq: ApiRequest = {
      method,
      path: url.pathname,
      params,
      query: url.searchParams,
      body,
      account,
      key,
      requestId,
      seq: ++apiCounter,
      now,
      charge(credits: number): void {
        if (credits <= 0) return;
        const ok = ctx.ledger.tryCharge(account, credits, {
          at: iso(now),
          key,
          method,
          path: url.pathname,
          requestId,
        });
        if (!ok) throw insufficientCredits(credits, ctx.ledger.balance(account));
        charged += credits;
        call.credits = charged;
      },
      note(asked, returned): void {
        call.asked = asked;
        call.returned = returned;
      },
    };
    let out: ApiResponse;
    try {
      out = await route.handler!(apiReq, ctx);
    } catch (e) {
      const err =
        e instanceof ApiError
          ? e
          : new ApiError(500, 'internal_error', `sandbox bug: ${(e as Error)?.message ?? String(e)}`);
      if (!(e instanceof ApiError)) console.error('[sandbox] handler failed', e);
      return fail(err, { ...authed(), ...rateHeaders, 'x-credits-charged': String(charged) });
    }
    await sleep(ctx.faults.answerDelay(url.pathname));
    // The lost answer: the work is done and charged, then the client never sees the result.
    const lost = ctx.faults.decideLostAnswer(url.pathname);
    if (lost.kind === 'reset') {
      call.fault = 'lost_answer_reset';
      req.socket.destroy();
      return;
    }
    if (lost.kind === '5xx') {
      call.fault = 'lost_answer_5xx';
      return fail(
        new ApiError(
          lost.status,
          FAULT_CODES[lost.status],
          'injected server error after the work was charged (sandbox fault)',
        ),
        {
          ...authed(),
          ...rateHeaders,
          'x-credits-charged': String(charged),
        },
      );
    }
    // A client gone before its answer could be sent (it died, or gave up) never got it.
    call.status = res.destroyed || req.socket.destroyed ? null : (out.status ?? 200);
    const padding = ctx.faults.answerPadding(url.pathname);
    if (padding > 0) call.fault = 'padded';
    const answer = padded(JSON.stringify(out.body), padding);
    send(res, out.status ?? 200, ctx.faults.current.answerNul ? withNul(answer) : answer, {
      ...authed(),
      ...rateHeaders,
      ...out.headers,
      'x-credits-charged': String(charged),
    });
  }

  const server = createServer({ keepAlive: true, keepAliveTimeout: 5_000 }, (req, res) => {
    const rec: { call?: CallRecord } = {};
    handle(req, res, rec)
      .finally(() => {
        if (rec.call) ctx.calls.push(rec.call);
      })
      .catch((e: unknown) => {
        console.error('[sandbox] request failed', e);
        if (rec.call) rec.call.status = 500;
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":{"code":"internal_error","message":"sandbox bug"}}');
        } else {
          res.destroy();
        }
      });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return {
    server,
    closeAll(): void {
      abort.abort();
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
}
