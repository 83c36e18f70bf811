import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { unreadBy } from './loopback-sockets.ts';

export interface ProxyCall {
  seq: number;
  method: string;
  path: string;
  /** The `domains` of a bulk enrich call. */
  domains?: string[];
  /** The request body as sent (UTF-8): which request a call repeats. */
  body: string;
  startedAt: number;
  /** Set once the sandbox's answer has been passed on whole. */
  answeredAt?: number;
  status?: number;
  /** `x-credits-charged` of the answer. */
  credits: number;
  requestId?: string;
  /** Who sent it, as `senderOf` named its connection when the proxy accepted it. */
  sender?: string;
}

export interface ApiProxyOptions {
  /** Names the client of a connection (its port on 127.0.0.1), when the proxy accepts it. */
  senderOf?: (clientPort: number, proxyPort: number) => string | undefined;
}

export interface ApiProxy {
  readonly url: string;
  readonly calls: ProxyCall[];
  /** Calls that reached the proxy while it was closed and have not been forwarded. */
  held(): number;
  /** Forwarded calls whose answer has not been passed on yet. */
  inFlight(): number;
  /**
   * Resolves once the proxy has read and recorded every byte its clients have written until now (Linux only). After a
   * client is stopped (SIGSTOP), the calls it sent are then all in `calls`.
   */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** From now on, calls wait at the proxy: they do not reach the sandbox, so nothing new is charged. */
  close(): void;
  /** Forwards the waiting calls whose client is still connected, and every later call. */
  open(): void;
  /** Resolves when no forwarded call is waiting for the sandbox's answer. */
  drained(timeoutMs?: number): Promise<void>;
  /** From now on, calls reach the sandbox (and are charged) but their answers wait at the proxy. */
  holdAnswers(): void;
  /** Answers waiting at the proxy. */
  heldAnswers(): number;
  /** Later answers pass on at once again; those already waiting keep waiting until `releaseAnswers`. */
  stopHolding(): void;
  /** Passes the waiting answers on, and every later one. */
  releaseAnswers(): void;
  /**
   * From now on, each successful answer's body is passed on as `rewrite` makes it (the service's text as someone else
   * wrote it, e.g. a company name planted to run as a spreadsheet formula); what the sandbox charged is unchanged.
   */
  rewriteAnswers(rewrite: (path: string, body: Buffer) => Buffer): void;
  stop(): Promise<void>;
}

/**
 * A recording HTTP proxy in front of the sandbox, on 127.0.0.1. It records which call carried which domains and
 * what the sandbox charged for it (by request id, the same id as in the ledger), and it can be closed: a drill closes
 * it, waits until every answered call has been saved by the kit, and kills the worker with calls hanging in it.
 */
export async function startApiProxy(target: string, options: ApiProxyOptions = {}): Promise<ApiProxy> {
  const upstream = new URL(target);
  const calls: ProxyCall[] = [];
  const waiting: (() => void)[] = [];
  const answers: (() => void)[] = [];
  let open = true;
  let holdingAnswers = false;
  let rewrite: ((path: string, body: Buffer) => Buffer) | undefined;
  let forwarded = 0;
  let seq = 0;
  /** Requests whose head has been read and whose body has not ended. */
  let receiving = 0;
  const senders = new WeakMap<import('node:net').Socket, string>();

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, call: ProxyCall) => {
    forwarded += 1;
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        forwarded -= 1;
      }
    };
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        call.status = answer.statusCode;
        call.credits = Number(answer.headers['x-credits-charged'] ?? 0);
        call.requestId = String(answer.headers['x-request-id'] ?? '');
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.once('error', () => {
          res.destroy();
          settle();
        });
        answer.once('end', () => {
          const pass = () => {
            const status = answer.statusCode ?? 502;
            let body: Buffer = Buffer.concat(chunks);
            const headers = { ...answer.headers };
            if (rewrite && status < 300) {
              body = rewrite(call.path, body);
              delete headers['transfer-encoding'];
              headers['content-length'] = String(body.length);
            }
            res.writeHead(status, headers);
            res.end(body);
            call.answeredAt = Date.now();
            settle();
          };
          if (holdingAnswers) answers.push(pass);
          else pass();
        });
      },
    );
    out.once('error', () => {
      res.destroy();
      settle();
    });
    // If the kit's socket goes away (a killed worker), the sandbox still finishes, and still charges, the call.
    out.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    receiving += 1;
    let received = false;
    const done = () => {
      if (!received) {
        received = true;
        receiving -= 1;
      }
    };
    req.once('close', done);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      done();
      const body = Buffer.concat(chunks);
      const call: ProxyCall = {
        seq: ++seq,
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0]!,
        startedAt: Date.now(),
        credits: 0,
        body: body.toString('utf8'),
        ...(senders.has(req.socket) ? { sender: senders.get(req.socket)! } : {}),
      };
      if (call.path.endsWith('/enrich/bulk')) {
        try {
          call.domains = (JSON.parse(body.toString('utf8')) as { domains?: string[] }).domains;
        } catch {
          // not ours to judge
        }
      }
      calls.push(call);
      const go = () => {
        if (req.socket.destroyed || res.destroyed) return; // the worker died while its call was held
        forward(req, res, body, call);
      };
      if (open) go();
      else waiting.push(go);
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  let port = 0;
  server.on('connection', (socket) => {
    const sender = socket.remotePort === undefined ? undefined : options.senderOf?.(socket.remotePort, port);
    if (sender !== undefined) senders.set(socket, sender);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    held: () => waiting.length,
    inFlight: () => forwarded,
    async caughtUp(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      // A read request is recorded on its body's end, a turn of the event loop later: both are waited for.
      while (unreadBy(port) > 0 || receiving > 0) {
        if (Date.now() > deadline) {
          throw new Error(`the proxy has not read what its clients sent after ${timeoutMs} ms (${receiving} requests)`);
        }
        await sleep(1);
      }
    },
    close() {
      open = false;
    },
    open() {
      open = true;
      for (const go of waiting.splice(0)) go();
    },
    holdAnswers() {
      holdingAnswers = true;
    },
    heldAnswers: () => answers.length,
    stopHolding() {
      holdingAnswers = false;
    },
    releaseAnswers() {
      holdingAnswers = false;
      for (const pass of answers.splice(0)) pass();
    },
    rewriteAnswers(fn) {
      rewrite = fn;
    },
    async drained(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (forwarded > 0) {
        if (Date.now() > deadline) throw new Error(`${forwarded} proxied calls still unanswered after ${timeoutMs} ms`);
        await sleep(5);
      }
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
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
