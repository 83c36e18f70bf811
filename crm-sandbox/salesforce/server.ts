/**
 * The HTTP server: every call goes the same way: a fault on demand, then authentication (401 INVALID_SESSION_ID),
 * the org's daily API request limit (403 REQUEST_LIMIT_EXCEEDED, each call under `/services/data` counted and
 * reported in `Sforce-Limit-Info: api-usage=n/m`), then the route.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Sessions } from './auth.ts';
import type { Faults, RequestFault } from './faults.ts';
import { ApiFault, errorReply, type Reply, type Request } from './http.ts';

export const MAX_BODY_BYTES = 150 * 1024 * 1024;

export interface CallRecord {
  method: string;
  path: string;
  status: number;
}

export interface ApiUsage {
  used: number;
  max: number;
}

export type Handler = (req: Request) => Reply | Promise<Reply>;

export interface ServerDeps {
  sessions: Sessions;
  faults: Faults;
  usage: ApiUsage;
  calls: CallRecord[];
  /** Routes below `/services/data/vXX.X/`, chosen from the method and path. */
  api: (req: Request) => Handler | undefined;
  /** Routes outside it (the token endpoint, userinfo, the identity URL); `auth` says if a session is needed. */
  other: (req: Request) => { handler: Handler; auth: boolean } | undefined;
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    // A request cut mid-body is never acted on: Salesforce keeps nothing of an upload that did not arrive whole.
    req.on('aborted', () => resolve(undefined));
    req.on('error', () => resolve(undefined));
  });
}

function send(res: ServerResponse, reply: Reply, extra: Record<string, string>): void {
  const headers: Record<string, string> = { ...extra, ...reply.headers };
  if (reply.status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  if (reply.text !== undefined) {
    res.writeHead(reply.status, { ...headers, 'content-type': reply.contentType ?? 'text/csv' }).end(reply.text);
    return;
  }
  const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
  res.writeHead(reply.status, { ...headers, 'content-type': 'application/json;charset=UTF-8' }).end(body);
}

function faultReply(fault: RequestFault): Reply {
  const status = fault.status ?? 503;
  const headers: Record<string, string> =
    fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
  if (fault.html) {
    const page = `<html><head><title>${status}</title></head><body><h1>Service Unavailable</h1></body></html>`;
    return { status, text: page, contentType: 'text/html', headers };
  }
  const code = fault.errorCode ?? (status === 429 ? 'REQUEST_LIMIT_EXCEEDED' : 'SERVER_UNAVAILABLE');
  return { ...errorReply(status, code, fault.message ?? 'The server is temporarily unavailable'), headers };
}

function toRequest(req: IncomingMessage, body: string): Request & { path: string; api: boolean } {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const match = /^\/services\/data\/v(\d+\.\d)(\/.*)?$/.exec(url.pathname);
  const rest = match ? (match[2] ?? '') : url.pathname;
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    segments: rest.split('/').filter(Boolean).map(decodeURIComponent),
    version: match?.[1] ?? '',
    query: url.searchParams,
    body,
    path: url.pathname,
    api: match !== null,
  };
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization ?? '';
  return /^Bearer (.+)$/i.exec(header)?.[1]?.trim();
}

async function answer(deps: ServerDeps, http: IncomingMessage, req: ReturnType<typeof toRequest>): Promise<Reply> {
  const route = req.api ? { handler: deps.api(req), auth: true } : deps.other(req);
  if (!route?.handler) return errorReply(404, 'NOT_FOUND', 'The requested resource does not exist');
  if (route.auth && !deps.sessions.valid(bearer(http))) {
    return errorReply(401, 'INVALID_SESSION_ID', 'Session expired or invalid');
  }
  if (req.api && !deps.sessions.apiAllowed(bearer(http))) {
    return errorReply(401, 'INVALID_SESSION_ID', 'This session is not valid for use with the REST API');
  }
  if (req.api) {
    if (deps.usage.used >= deps.usage.max)
      return errorReply(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    deps.usage.used++;
  }
  try {
    return await route.handler(req);
  } catch (error) {
    if (error instanceof ApiFault) return errorReply(error.status, error.errorCode, error.message, error.fields);
    const status = (error as { status?: number }).status;
    const code = (error as { errorCode?: string }).errorCode;
    if (typeof status === 'number' && typeof code === 'string')
      return errorReply(status, code, (error as Error).message);
    return errorReply(500, 'UNKNOWN_EXCEPTION', 'An unexpected error occurred');
  }
}

async function handle(deps: ServerDeps, http: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(http.url ?? '/', 'http://127.0.0.1').pathname;
  if (deps.faults.takeStall((http.method ?? 'GET').toUpperCase(), path)) {
    http.pause();
    await new Promise((resolve) => res.once('close', resolve));
    return;
  }
  const body = await readBody(http);
  if (body === undefined) {
    res.destroy();
    return;
  }
  const req = toRequest(http, body);
  const fault = deps.faults.take(req.method, req.path);
  if (fault?.drop) {
    res.socket?.destroy();
    return;
  }
  const reply = fault && !fault.dropAnswer ? faultReply(fault) : await answer(deps, http, req);
  deps.calls.push({ method: req.method, path: req.path, status: reply.status });
  if (fault?.dropAnswer) {
    res.socket?.destroy();
    return;
  }
  const limit: Record<string, string> = req.api
    ? { 'sforce-limit-info': `api-usage=${deps.usage.used}/${deps.usage.max}` }
    : {};
  send(res, reply, limit);
}

export function createStandInServer(deps: ServerDeps): { server: Server; closeAll(): void } {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(deps, req, res).catch(() => res.destroy());
  });
  // Longer than clients keep an idle connection (undici: 4 s), so that a reused connection is not closed under a request.
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    server,
    closeAll() {
      for (const socket of sockets) socket.destroy();
    },
  };
}
