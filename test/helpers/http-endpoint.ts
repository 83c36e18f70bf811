/** A local HTTP endpoint for tests that receive calls (webhook deliveries): 127.0.0.1, a free port. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorder<T> {
  url: string;
  /** What was recorded, in arrival order. */
  items: T[];
  /** Status to answer the n-th request (0-based); default 200. */
  answer: (n: number) => number;
  waitFor(count: number, timeoutMs?: number): Promise<T[]>;
  close(): Promise<void>;
}

export interface RecorderOptions {
  /** Said in the timeout error: "expected 3 <what>, got 1". */
  what: string;
  waitTimeoutMs: number;
  pollMs: number;
}

/**
 * Listens at `path`; reads each request's whole body, answers it with `answer(n)` and keeps what `record` makes of
 * it (nothing when `record` returns undefined).
 */
export async function startRecorder<T>(
  path: string,
  options: RecorderOptions,
  record: (req: IncomingMessage, body: string, status: number) => T | undefined,
): Promise<Recorder<T>> {
  const items: T[] = [];
  let seen = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const status = recorder.answer(seen++);
    const item = record(req, Buffer.concat(chunks).toString('utf8'), status);
    if (item !== undefined) items.push(item);
    res.writeHead(status);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const recorder: Recorder<T> = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    items,
    answer: () => 200,
    async waitFor(count, timeoutMs = options.waitTimeoutMs) {
      const until = Date.now() + timeoutMs;
      while (items.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} ${options.what}, got ${items.length}`);
        await new Promise((res) => setTimeout(res, options.pollMs));
      }
      return items;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return recorder;
}
