/**
 * A transparent HTTP proxy on 127.0.0.1 that forwards every request to the sandbox and records the status and time
 * of each answer, so that a benchmark counts what the service saw (accepted calls, 429s) without trusting the kit's
 * own numbers.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

export interface ProxiedCall {
  /** Epoch ms when the request was sent on to the service. */
  at: number;
  method: string;
  path: string;
  status: number;
}

export interface CountingProxy {
  url: string;
  calls: ProxiedCall[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade', 'proxy-connection']);

function forwardable(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>) {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });
  const calls: ProxiedCall[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const at = Date.now();
      try {
        const answer = await request(`${target}${path}`, {
          method: (req.method ?? 'GET') as 'GET',
          headers: forwardable(req.headers),
          body: body.length > 0 ? body : null,
          dispatcher: agent,
        });
        calls.push({ at, method: req.method ?? 'GET', path: path.split('?')[0]!, status: answer.statusCode });
        res.writeHead(answer.statusCode, forwardable(answer.headers));
        await pipeline(answer.body, res);
      } catch {
        res.destroy();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}

/** The most calls that fall in any window of `windowMs` (sliding over the call times). */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
