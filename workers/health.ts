/**
 * Liveness and readiness over HTTP, for an orchestrator's probes:
 *   GET /livez   200 while the process answers at all (restart it when this fails).
 *   GET /readyz  200 when every check passes, else 503; the body names each check and its state.
 * A check is a function that resolves with a short description or throws; each has its own deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HealthCheck = () => Promise<string>;

export interface HealthServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port: number;
  checks: Record<string, HealthCheck>;
  /** How long one check may take before it counts as failed (default 2 s). */
  checkTimeoutMs?: number;
}

export async function runChecks(
  checks: Record<string, HealthCheck>,
  timeoutMs = 2_000,
): Promise<{ ready: boolean; checks: Record<string, { ok: boolean; detail: string }> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        return [name, { ok: true, detail: await Promise.race([check(), deadline]) }] as const;
      } catch (error) {
        return [name, { ok: false, detail: error instanceof Error ? error.message : String(error) }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, result]) => result.ok), checks: Object.fromEntries(entries) };
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://health').pathname;
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, { error: 'use GET' });
    if (path === '/livez') return reply(200, { ok: true });
    if (path === '/readyz') {
      void runChecks(options.checks, options.checkTimeoutMs).then(
        (result) => reply(result.ready ? 200 : 503, result),
        (error: unknown) => reply(503, { ready: false, error: String(error) }),
      );
      return;
    }
    reply(404, { error: 'GET /livez or /readyz' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
