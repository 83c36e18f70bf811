import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
}

export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far (keep-alive reuse keeps this low). */
  connections: () => number;
  close: () => Promise<void>;
}

/** A tiny HTTP server on 127.0.0.1 that records every request and answers with `handler`. */
export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const recorded = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, json };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res, requests.length - 1)).catch((err: unknown) => {
        res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers JSON with the service's usual headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': 'req_test',
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: { field?: string; headers?: Record<string, string | number> } = {},
): void {
  const error: Record<string, unknown> = { code, message, request_id: 'req_body' };
  if (extra.field) error['field'] = extra.field;
  sendJson(res, status, { error }, extra.headers);
}

/** One signal as the service sends it: news detected at 2026-03-01T12:00:00Z, with `fields` added or replaced. */
export function signalBody(signal_id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { signal_id, signal_type: 'news', detected_at: '2026-03-01T12:00:00Z', ...fields };
}

/** A minimal company enrichment body. */
export function enrichBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    company: { name: 'Acme', domain: 'acme.com' },
    signals: [
      signalBody('sig_abc123', {
        signal_subtype: 'companyNews',
        signal_name: 'Acme raises',
        association: 'company',
        company: { name: 'Acme', domain: 'acme.com' },
        data: { summary: 'Acme raises a round' },
      }),
    ],
    signal_summary: { news: 1 },
    coverage: {
      total_before_filters: 1,
      total_after_filters: 1,
      signal_types_available: ['news'],
      date_range: { earliest: '2026-03-01T12:00:00Z', latest: '2026-03-01T12:00:00Z' },
    },
    ...overrides,
  };
}
