/**
 * The HTTP server. Every API call goes the same way: its route (404 when none), its token (401), the portal's
 * limits (429), an injected fault, its scopes (403), its JSON body (400), its handler; every authenticated answer
 * carries the `X-HubSpot-RateLimit-*` headers. `/oauth/v2/private-apps/get/access-token-info` tells a token's scopes;
 * `/__admin/*` (faults, calls) is the tests' own door, not HubSpot's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HubspotApiError, invalidToken, notFound, serverError, validationError } from './errors.ts';
import { type Fault, type Faults, faultSchema } from './faults.ts';
import type { PortalLimits } from './limits.ts';
import type { Route, RouteAnswer } from './routes.ts';
import { type HubspotObject, OBJECTS } from './schema.ts';
import type { TokenInfo, Tokens } from './tokens.ts';

export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface CallRecord {
  method: string;
  path: string;
  status: number;
}

export interface ServerDeps {
  routes: Route[];
  tokens: Tokens;
  limits: PortalLimits;
  faults: Faults;
  portalId: number;
  calls: CallRecord[];
}

interface Matched {
  route: Route;
  object: HubspotObject;
  params: Record<string, string>;
}

function paramsOf(pattern: string[], parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (const [i, seg] of pattern.entries()) {
    if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(parts[i] as string);
    else if (seg !== parts[i]) return undefined;
  }
  return params;
}

function match(routes: Route[], method: string, path: string): Matched | undefined {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    const pattern = route.path.split('/').filter(Boolean);
    if (route.method !== method || pattern.length !== parts.length) continue;
    const params = paramsOf(pattern, parts);
    if (!params) continue;
    if (!OBJECTS.includes(params['object'] as HubspotObject)) {
      throw validationError(`Unable to infer object type from: ${params['object']}`);
    }
    return { route, object: params['object'] as HubspotObject, params };
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new HubspotApiError(413, { message: 'Request body too large', category: 'VALIDATION_ERROR' });
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw validationError(`Invalid input JSON: ${(error as Error).message}`);
  }
}

function send(res: ServerResponse, answer: RouteAnswer, headers: Record<string, string>): void {
  const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...headers,
    ...(text ? { 'Content-Type': 'application/json;charset=utf-8' } : {}),
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

function faultError(deps: ServerDeps, fault: Fault): HubspotApiError {
  return fault.status === 429 ? deps.limits.refuse(fault.policy ?? 'TEN_SECONDLY_ROLLING') : serverError(fault.status);
}

/** The API pipeline for a matched route: the answer and the headers it carries. */
async function api(deps: ServerDeps, req: IncomingMessage, matched: Matched, url: URL): Promise<RouteAnswer> {
  const token = deps.tokens.authenticate(req.headers.authorization);
  if (token instanceof HubspotApiError) throw token;
  const limited = deps.limits.take();
  if (limited) throw limited;
  const fault = deps.faults.take(url.pathname);
  if (fault) throw faultError(deps, fault);
  const refused = deps.tokens.authorize(token, matched.route.scopes(matched.object));
  if (refused) throw refused;
  const body = await readBody(req);
  return matched.route.handle({ object: matched.object, params: matched.params, query: url.searchParams, body, token });
}

function tokenInfo(deps: ServerDeps, body: unknown): RouteAnswer {
  const key = (body as { tokenKey?: unknown } | undefined)?.tokenKey;
  const info: TokenInfo | undefined = typeof key === 'string' ? deps.tokens.get(key) : undefined;
  if (!info || info.expired) throw invalidToken();
  return { status: 200, body: { userId: info.userId, hubId: deps.portalId, appId: info.appId, scopes: info.scopes } };
}

async function admin(deps: ServerDeps, req: IncomingMessage, path: string): Promise<RouteAnswer> {
  if (req.method === 'GET' && path === '/__admin/calls') return { status: 200, body: { calls: deps.calls } };
  const body = (await readBody(req)) as Record<string, unknown> | undefined;
  if (req.method === 'POST' && path === '/__admin/faults') {
    const fault = faultSchema.safeParse(body);
    if (!fault.success) throw validationError(`Invalid fault: ${fault.error.issues.map((i) => i.message).join('; ')}`);
    deps.faults.add(fault.data);
    return { status: 204 };
  }
  if (req.method === 'POST' && path === '/__admin/tokens/expire') {
    deps.tokens.expire(String(body?.['token']));
    return { status: 204 };
  }
  throw notFound(`No admin route ${path}`);
}

async function answer(
  deps: ServerDeps,
  req: IncomingMessage,
  url: URL,
): Promise<{ answer: RouteAnswer; api: boolean }> {
  const path = url.pathname;
  if (path.startsWith('/__admin/')) return { answer: await admin(deps, req, path), api: false };
  if (req.method === 'POST' && path === '/oauth/v2/private-apps/get/access-token-info') {
    return { answer: tokenInfo(deps, await readBody(req)), api: false };
  }
  const matched = match(deps.routes, req.method ?? 'GET', path);
  if (!matched) throw notFound(`No route for ${req.method} ${path}`);
  return { answer: await api(deps, req, matched, url), api: true };
}

export function createHubspotServer(deps: ServerDeps): { server: Server; closeAll(): void } {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (deps.faults.takeStall(url.pathname)) {
      // A call in flight when its caller dies: never read, never acted on, never answered.
      req.pause();
      return;
    }
    answer(deps, req, url)
      .then(({ answer: a, api: isApi }) => {
        if (isApi) deps.calls.push({ method: req.method ?? '', path: url.pathname, status: a.status });
        send(res, a, isApi ? deps.limits.headers() : {});
      })
      .catch((error: unknown) => {
        const failure = error instanceof HubspotApiError ? error : serverError(500);
        if (!url.pathname.startsWith('/__admin/')) {
          deps.calls.push({ method: req.method ?? '', path: url.pathname, status: failure.status });
        }
        const headers = failure.status === 401 ? {} : { ...deps.limits.headers(), ...failure.headers };
        send(res, { status: failure.status, body: failure.body }, headers);
      });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    server,
    closeAll: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}
