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

type Headers = Record<string, string | number>;

/** What every request of one server shares: its context, routes, limiter, counters and its abortable sleep. */
interface ServerState {
  ctx: ApiContext;
  limiter: RateLimiter;
  compiled: CompiledRoute[];
  sleep(ms: number): Promise<void>;
  nextRequestId(): string;
  nextApiSeq(): number;
}

/** One request on its way through the pipeline, with its entry in the call record and how to answer it an error. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  call: CallRecord;
  requestId: string;
  base: Headers;
  url: URL;
  method: string;
  fail(err: ApiError, extra?: Headers): void;
}

/** An authenticated, admitted API call: its key and account, and the headers of every answer it gets. */
interface Admitted {
  key: string;
  account: string;
  /** The common headers with the balance as it is when the answer is sent. */
  authed(): Headers;
  rateHeaders: Headers;
}

export function createSandboxServer(deps: ServerDeps): SandboxServer {
  const { ctx } = deps;
  const sockets = new Set<Socket>();
  const abort = new AbortController();
  const requestSalt = hashString('requests', deps.seed);
  let requestCounter = 0;
  let apiCounter = 0;
  const state: ServerState = {
    ctx,
    limiter: deps.limiter,
    compiled: deps.routes.map(compile),
    sleep: abortableSleep(abort.signal),
    nextRequestId: () => `req_${hex8(hash2(requestSalt, ++requestCounter))}${hex8(requestCounter)}`,
    nextApiSeq: () => ++apiCounter,
  };

  const server = createServer({ keepAlive: true, keepAliveTimeout: 5_000 }, (req, res) => {
    const rec: { call?: CallRecord } = {};
    handle(state, req, res, rec)
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

/** A sleep that ends early, and at once, when `signal` aborts (the server closing). */
function abortableSleep(signal: AbortSignal): (ms: number) => Promise<void> {
  return (ms) =>
    new Promise((resolve) => {
      if (ms <= 0 || signal.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
}

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
  headers: Headers,
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
  compiled: CompiledRoute[],
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
async function handle(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  rec: { call?: CallRecord },
): Promise<void> {
  const { ctx } = state;
  const requestId = state.nextRequestId();
  const base: Headers = { 'x-request-id': requestId, 'x-credits-charged': '0' };
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
  const fail = (err: ApiError, extra: Headers = {}): void => {
    call.status = err.status;
    send(res, err.status, JSON.stringify(errorBody(err, requestId)), { ...base, ...extra, ...err.headers });
  };
  const x: Exchange = { req, res, call, requestId, base, url, method, fail };
  const found = routeOf(state, x);
  if (!found) return;
  const { route, params } = found;
  if (route.raw) return serveRaw(state, x, route, params);
  const admitted = await admit(state, x);
  if (!admitted) return;
  const body = await parseBody(x, route, admitted);
  if (!body) return;
  await serveApi(state, x, route, params, body.value, admitted);
}

/** The route of the request with its path parameters, or undefined once answered 404 or 405. */
function routeOf(state: ServerState, x: Exchange): { route: Route; params: Record<string, string> } | undefined {
  const { method, url, fail } = x;
  try {
    const found = match(state.compiled, method, url.pathname);
    if (!found.hit) {
      if (found.allowed.length > 0) {
        fail(new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`), {
          allow: [...new Set(found.allowed)].join(', '),
        });
        return undefined;
      }
      fail(notFound(`no endpoint ${method} ${url.pathname}`));
      return undefined;
    }
    return { route: found.hit.route, params: found.params };
  } catch {
    fail(notFound(`no endpoint ${method} ${url.pathname}`));
    return undefined;
  }
}

/** A raw route answers the request itself; its outcome fills in the call record. */
async function serveRaw(state: ServerState, x: Exchange, route: Route, params: Record<string, string>): Promise<void> {
  const outcome = await route.raw!(x.req, x.res, state.ctx, {
    requestId: x.requestId,
    params,
    query: x.url.searchParams,
  });
  x.call.status = x.res.statusCode;
  if (outcome) {
    x.call.fault = outcome.fault ?? null;
    x.call.asked = outcome.asked;
    x.call.returned = outcome.returned;
  }
}

/**
 * Authentication (401), then the fault bursts and the account rate limit (429), then the injected faults that answer
 * before any work (reset, 5xx, malformed body). Undefined once the request has been answered.
 */
async function admit(state: ServerState, x: Exchange): Promise<Admitted | undefined> {
  const { ctx, limiter, sleep } = state;
  const { req, res, call, base, fail } = x;
  const key = extractApiKey(req.headers);
  const account = ctx.accounts.accountFor(key);
  call.account = account;
  if (!key || !account) {
    await sleep(ctx.faults.latencyMs);
    fail(unauthorized(key ? 'unknown API key' : 'missing API key (X-API-KEY or Authorization: Bearer)'), {
      'www-authenticate': 'Bearer',
    });
    return undefined;
  }
  const authed = (): Headers => ({
    ...base,
    'x-credits-remaining': ctx.ledger.balance(account),
  });

  // Faults are drawn before the rate limit so a burst 429 does not use a slot; both before any work.
  const fault = ctx.faults.decide();
  if (fault.kind === 'rate_limited') {
    call.fault = 'rate_limited_burst';
    await sleep(ctx.faults.latencyMs);
    fail(new ApiError(429, 'rate_limited', 'rate limit burst (sandbox fault)'), {
      ...authed(),
      'retry-after': String(fault.retryAfterS),
    });
    return undefined;
  }
  call.realMs = performance.now();
  const rate = limiter.take(account);
  if (!rate.ok) {
    await sleep(ctx.faults.latencyMs);
    const seconds = Math.max(1, Math.ceil(rate.retryAfterMs / 1000));
    fail(
      new ApiError(
        429,
        'rate_limited',
        `rate limit of ${limiter.limit} requests per ${limiter.windowMs / 1000} s exceeded for this account`,
      ),
      { ...authed(), 'retry-after': String(seconds), 'x-ratelimit-limit': limiter.limit, 'x-ratelimit-remaining': 0 },
    );
    return undefined;
  }
  call.rateCounted = limiter.enabled;
  const rateHeaders: Headers = limiter.enabled
    ? { 'x-ratelimit-limit': limiter.limit, 'x-ratelimit-remaining': rate.remaining }
    : {};
  if (fault.kind === 'reset') {
    call.fault = 'reset';
    req.socket.destroy();
    return undefined;
  }
  await sleep(ctx.faults.latencyMs);
  if (fault.kind === 'error') {
    call.fault = 'error';
    call.status = fault.status;
    const headers = { ...authed(), ...rateHeaders, ...(fault.status === 503 ? { 'retry-after': '1' } : {}) };
    if (fault.html) send(res, fault.status, HTML_PAGES[fault.status]!, headers, 'text/html');
    else fail(new ApiError(fault.status, FAULT_CODES[fault.status], 'injected server error (sandbox fault)'), headers);
    return undefined;
  }
  if (fault.kind === 'malformed') {
    call.fault = 'malformed';
    call.status = 200;
    send(res, 200, MALFORMED_BODY, { ...authed(), ...rateHeaders });
    return undefined;
  }
  return { key, account, authed, rateHeaders };
}

/** The request's JSON body (undefined when it has none), or undefined once answered 400 or 413. */
async function parseBody(x: Exchange, route: Route, admitted: Admitted): Promise<{ value: unknown } | undefined> {
  let body: unknown;
  try {
    const raw = await readBody(x.req);
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (e) {
        throw invalidJson(`request body is not valid JSON: ${(e as Error).message}`);
      }
    } else if (x.method === 'POST' || x.method === 'PATCH') {
      if (!route.path.endsWith('/test')) throw invalidJson('request body is empty; expected a JSON object');
    }
  } catch (e) {
    x.fail(e instanceof ApiError ? e : invalidJson(), { ...admitted.authed(), ...admitted.rateHeaders });
    return undefined;
  }
  return { value: body };
}

/** Runs the route's handler (which validates, works and charges), then answers, unless a lost-answer fault says not. */
async function serveApi(
  state: ServerState,
  x: Exchange,
  route: Route,
  params: Record<string, string>,
  body: unknown,
  admitted: Admitted,
): Promise<void> {
  const { ctx, sleep } = state;
  const { req, res, call, url, fail } = x;
  const { authed, rateHeaders } = admitted;
  const ran = await runHandler(state, x, route, params, body, admitted);
  if (!ran) return;
  const { out, charged } = ran;
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
        'x-credits-charged': String(charged()),
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
    'x-credits-charged': String(charged()),
  });
}

/** The handler's answer and the credits it has charged, or undefined once its error has been answered. */
async function runHandler(
  state: ServerState,
  x: Exchange,
  route: Route,
  params: Record<string, string>,
  body: unknown,
  admitted: Admitted,
): Promise<{ out: ApiResponse; charged: () => number } | undefined> {
  const { ctx } = state;
  const { call, url, method, requestId } = x;
  const { key, account } = admitted;
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
    seq: state.nextApiSeq(),
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
  try {
    return { out: await route.handler!(apiReq, ctx), charged: () => charged };
  } catch (e) {
    const err =
      e instanceof ApiError
        ? e
        : new ApiError(500, 'internal_error', `sandbox bug: ${(e as Error)?.message ?? String(e)}`);
    if (!(e instanceof ApiError)) console.error('[sandbox] handler failed', e);
    x.fail(err, { ...admitted.authed(), ...admitted.rateHeaders, 'x-credits-charged': String(charged) });
    return undefined;
  }
}
