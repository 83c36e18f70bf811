import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateWebhookSecret, signWebhook } from '../../../connectors/webhooks/signature.ts';
import {
  DEFAULT_MAX_BODY_BYTES,
  type ReceiverLogEntry,
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../../../intake/index.ts';
import { sendRaw } from './helpers.ts';

const secret = generateWebhookSecret();
const open: WebhookReceiver[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  while (open.length) await open.pop()!.close();
  vi.restoreAllMocks();
});

async function start(opts: Partial<WebhookReceiverOptions> = {}) {
  const enqueued: unknown[] = [];
  const logs: ReceiverLogEntry[] = [];
  const receiver = await startWebhookReceiver({
    auth: { kind: 'standard-webhooks', secrets: [secret] },
    enqueue: async (event) => {
      enqueued.push(event);
      return undefined;
    },
    log: (entry) => logs.push(entry),
    ...opts,
  });
  open.push(receiver);
  return { receiver, enqueued, logs };
}

function event(data: unknown = { summary: 'x' }) {
  return {
    event: 'signal.created',
    signal: {
      id: randomUUID(),
      type: 'news',
      company: { name: 'Acme', domain: 'acme.com' },
      detected_at: '2026-03-01T12:00:00Z',
      data,
    },
  };
}

async function postSigned(receiver: WebhookReceiver, body: string) {
  const headers = signWebhook({ id: 'msg_1', timestamp: new Date(), body, secret });
  const res = await fetch(receiver.webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe('webhook receiver hardening', () => {
  it('answers 400 to a target that is not a URL (http://[) and stays up', async () => {
    const { receiver } = await start();
    for (const target of ['http://[', 'http://[::1', 'https://[zz]/webhooks', '*']) {
      const answer = await sendRaw(receiver.port, `GET ${target} HTTP/1.1\r\nhost: x\r\n\r\n`);
      expect(answer.status, target).toBe(400);
    }
    expect((await fetch(`${receiver.url}/healthz`)).status).toBe(200);
  });

  it('refuses sockets past the connection cap at once, closes idle ones after the header timeout, then serves /healthz', async () => {
    const cap = 40;
    const extra = 160;
    const { receiver } = await start({
      maxConnections: cap,
      timeouts: { headersTimeoutMs: 5_000, requestTimeoutMs: 6_000, connectionsCheckingIntervalMs: 250 },
    });
    const closed: Promise<unknown>[] = [];
    let closedCount = 0;
    for (let i = 0; i < cap + extra; i++) {
      const socket = net.connect({ host: '127.0.0.1', port: receiver.port });
      socket.on('error', () => {});
      socket.resume(); // read to the end, so that the server's close is seen
      closed.push(once(socket, 'close').then(() => closedCount++));
      sockets.push(socket);
      await once(socket, 'connect');
    }
    // The sockets over the cap are closed by the server as they come in; the others stay open, idle.
    await new Promise<void>((resolve) => {
      const check = () => (closedCount >= extra ? resolve() : setImmediate(check));
      check();
    });
    const held = await new Promise<number>((resolve, reject) =>
      receiver.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    );
    expect(held).toBe(cap);
    // The idle ones never sent headers: closed once the header timeout passes (waited on, not slept).
    await Promise.all(closed);
    expect(closedCount).toBe(cap + extra);
    const health = await fetch(`${receiver.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('closes an idle keep-alive connection after its answer', async () => {
    const { receiver } = await start({ timeouts: { keepAliveTimeoutMs: 500 } });
    const socket = net.connect({ host: '127.0.0.1', port: receiver.port });
    sockets.push(socket);
    socket.on('error', () => {});
    await once(socket, 'connect');
    const data: Buffer[] = [];
    socket.on('data', (chunk) => data.push(chunk));
    socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await once(socket, 'close');
    expect(Buffer.concat(data).toString()).toMatch(/^HTTP\/1\.1 200/);
  });

  it('logs a client that disconnects mid-body as 499, without a stack trace', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { receiver, logs } = await start();
    const body = JSON.stringify(event());
    const headers = signWebhook({ id: 'msg_1', timestamp: new Date(), body, secret });
    const socket = net.connect({ host: '127.0.0.1', port: receiver.port });
    socket.on('error', () => {});
    await once(socket, 'connect');
    const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': body.length })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n');
    const reading = once(receiver.server, 'request');
    socket.write(`POST /webhooks HTTP/1.1\r\nhost: x\r\n${head}\r\n\r\n${body.slice(0, 20)}`);
    const logged = new Promise<ReceiverLogEntry>((resolve) => {
      const check = () => (logs.length ? resolve(logs[0]!) : setTimeout(check, 10));
      check();
    });
    // Wait until the receiver is reading the body (a request is open on the server), then go away.
    await reading;
    socket.destroy();
    const entry = await logged;
    expect(entry).toMatchObject({ status: 499, code: 'client_closed' });
    expect(errors).not.toHaveBeenCalled();
  });

  it('refuses an event nested thousands of levels deep with a 422 that says why (not a 503)', async () => {
    const { receiver, enqueued } = await start({ maxBodyBytes: 1024 * 1024 });
    // Built as text: JSON.stringify itself overflows the stack at this depth.
    const nested = `${'{"d":'.repeat(5_000)}"x"${'}'.repeat(5_000)}`;
    const answer = await postSigned(receiver, JSON.stringify(event('NESTED')).replace('"NESTED"', nested));
    expect(answer.status).toBe(422);
    expect(answer.body.error?.code).toBe('nesting_too_deep');
    expect(answer.body.error?.message).toMatch(/deeper than \d+ levels/);
    expect(enqueued).toHaveLength(0);
    // A normal event still goes through.
    expect((await postSigned(receiver, JSON.stringify(event({ a: { b: [1, 2] } })))).status).toBe(202);
  });

  it('bounds events at 64 KiB by default, so a delivery history cannot grow with 1 MiB events', async () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(64 * 1024);
    const { receiver, enqueued } = await start();
    const big = JSON.stringify(event({ summary: 'x'.repeat(200 * 1024) }));
    const answer = await postSigned(receiver, big);
    expect(answer.status).toBe(413);
    expect(enqueued).toHaveLength(0);
  });
});
