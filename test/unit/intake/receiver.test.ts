import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SignalCreatedEvent } from '../../../connectors/webhooks/events.ts';
import { generateWebhookSecret, signWebhook } from '../../../connectors/webhooks/signature.ts';
import {
  type EnqueueContext,
  type EnqueueResult,
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../../../intake/index.ts';
import { acmeWireEvent } from '../../helpers/signal-event.ts';

const secret = generateWebhookSecret();
const TOKEN = 'tok_0123456789abcdef0123';

function sampleEvent() {
  return acmeWireEvent({
    id: randomUUID(),
    domain: 'Acme.COM',
    detected_at: '2026-03-01T12:00:00.000+00:00',
    delivered_at: '2026-03-01T12:00:05Z',
  });
}

interface Harness {
  receiver: WebhookReceiver;
  enqueued: Array<{ event: SignalCreatedEvent; ctx: EnqueueContext }>;
}

const open: WebhookReceiver[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function start(
  opts: Partial<WebhookReceiverOptions> = {},
  enqueueImpl?: (event: SignalCreatedEvent) => Promise<EnqueueResult | undefined>,
): Promise<Harness> {
  const enqueued: Harness['enqueued'] = [];
  const receiver = await startWebhookReceiver({
    port: 0,
    auth: { kind: 'standard-webhooks', secrets: [secret] },
    maxBodyBytes: 1024 * 1024,
    ...opts,
    enqueue: async (event, ctx) => {
      enqueued.push({ event, ctx });
      return enqueueImpl ? enqueueImpl(event) : undefined;
    },
  });
  open.push(receiver);
  return { receiver, enqueued };
}

function signed(body: string, opts: { secret?: string; timestamp?: Date; id?: string } = {}) {
  return signWebhook({
    id: opts.id ?? 'msg_test',
    timestamp: opts.timestamp ?? new Date(),
    body,
    secret: opts.secret ?? secret,
  });
}

interface Posted {
  status: number;
  json: { error?: { code: string; message: string; field?: string } } & Record<string, unknown>;
  headers: Record<string, unknown>;
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Posted> {
  const res = await request(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : {}, headers: res.headers };
}

/** The receiver refused the post with this status and error code. */
function expectRefused(res: Posted, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.json.error?.code).toBe(code);
}

async function postSigned(h: Harness, event: unknown, extra: Record<string, string> = {}) {
  const body = JSON.stringify(event);
  return post(h.receiver.webhookUrl, body, { ...signed(body), ...extra });
}

describe('webhook receiver: accepted events', () => {
  it('answers GET /healthz', async () => {
    const { receiver } = await start();
    const res = await request(`${receiver.url}/healthz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ ok: true });
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('enqueues a signed event and answers 202, keeping unknown fields and normalizing', async () => {
    const h = await start();
    const event = sampleEvent();
    const res = await postSigned(h, event);
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ accepted: true, duplicate: false, signal_id: event.signal.id });
    expect(h.enqueued).toHaveLength(1);
    const got = h.enqueued[0]!;
    expect(got.ctx.webhookId).toBe('msg_test');
    expect(got.ctx.receivedAt).toBeInstanceOf(Date);
    expect(got.event.signal.company.domain).toBe('acme.com');
    expect(got.event.signal.detected_at).toBe('2026-03-01T12:00:00.000Z');
    expect(got.event['extra_top_field']).toEqual({ nested: true });
    expect(got.event.signal['extra_signal_field']).toBe('kept');
    expect(got.event.signal.company['linkedin_url']).toBe('/company/acme');
    expect(got.event.signal.data).toEqual({ summary: 'Acme raised $20M', amount: 20_000_000 });
  });

  it('accepts a delivery signed by the reference standardwebhooks package, and a rotated secret', async () => {
    const oldSecret = generateWebhookSecret();
    const h = await start({ auth: { kind: 'standard-webhooks', secrets: [secret, oldSecret] } });
    const body = JSON.stringify(sampleEvent());
    const now = new Date();
    const res = await post(h.receiver.webhookUrl, body, {
      'webhook-id': 'msg_ref',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(oldSecret).sign('msg_ref', now, body),
    });
    expect(res.status).toBe(202);
    expect(h.enqueued).toHaveLength(1);
  });

  it('acknowledges a redelivery with 200 {duplicate: true} when enqueue reports one', async () => {
    const seen = new Set<string>();
    const h = await start({}, async (event) => {
      const duplicate = seen.has(event.signal.id);
      seen.add(event.signal.id);
      return { duplicate, workflowId: `signal-${event.signal.id}` };
    });
    const event = sampleEvent();
    const first = await postSigned(h, event);
    const second = await postSigned(h, event);
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ accepted: true, duplicate: false, workflow_id: `signal-${event.signal.id}` });
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ accepted: true, duplicate: true });
  });

  it('answers only after enqueue resolved', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const h = await start({}, async () => {
      await gate;
      return undefined;
    });
    let answered = false;
    const pending = postSigned(h, sampleEvent()).then((r) => {
      answered = true;
      return r;
    });
    // Wait on the event (the start is in flight), not on a sleep; the gate is still closed, so no answer yet.
    await vi.waitFor(() => expect(h.enqueued).toHaveLength(1));
    expect(answered).toBe(false);
    release();
    expect((await pending).status).toBe(202);
  });

  it('answers 503 with Retry-After when enqueue rejects or hangs', async () => {
    const h = await start({ retryAfterSeconds: 7 }, async () => {
      throw new Error('temporal unavailable');
    });
    const res = await postSigned(h, sampleEvent());
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json.error).toMatchObject({ code: 'unavailable' });
    expect(res.json.error?.message).toContain('temporal unavailable');

    const slow = await start({ enqueueTimeoutMs: 100 }, () => new Promise(() => {}));
    const res2 = await postSigned(slow, sampleEvent());
    expect(res2.status).toBe(503);
    expect(res2.headers['retry-after']).toBe('5');
  });

  it('acknowledges other event kinds without enqueueing them', async () => {
    const h = await start();
    const res = await postSigned(h, { event: 'signal.deleted', signal: { id: 'x' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ accepted: false, ignored: true });
    expect(h.enqueued).toHaveLength(0);
  });

  it('accepts sig_ ids, Z timestamps and absent optional fields', async () => {
    const h = await start();
    const res = await postSigned(h, {
      event: 'signal.created',
      signal: {
        id: 'sig_0a1b2c',
        type: 'hiring-trends',
        company: { domain: 'x.io' },
        detected_at: '2026-03-01T12:00:00Z',
      },
    });
    expect(res.status).toBe(202);
    expect(h.enqueued[0]!.event.signal.id).toBe('sig_0a1b2c');
  });
});

describe('webhook receiver: authentication', () => {
  it('401 for missing signature headers', async () => {
    const h = await start();
    const res = await post(h.receiver.webhookUrl, JSON.stringify(sampleEvent()));
    expectRefused(res, 401, 'missing_signature');
    expect(h.enqueued).toHaveLength(0);
  });

  it('401 for a wrong secret and for a tampered body', async () => {
    const h = await start();
    const body = JSON.stringify(sampleEvent());
    const wrong = await post(h.receiver.webhookUrl, body, signed(body, { secret: generateWebhookSecret() }));
    expectRefused(wrong, 401, 'invalid_signature');
    const tampered = body.replace('Acme raises', 'Acme sells');
    const res = await post(h.receiver.webhookUrl, tampered, signed(body));
    expectRefused(res, 401, 'invalid_signature');
    expect(h.enqueued).toHaveLength(0);
  });

  it('401 for a stale or a future timestamp', async () => {
    const h = await start();
    const body = JSON.stringify(sampleEvent());
    const stale = await post(h.receiver.webhookUrl, body, signed(body, { timestamp: new Date(Date.now() - 301_000) }));
    expectRefused(stale, 401, 'stale_timestamp');
    expect(stale.json.error?.message).toMatch(/old/);
    const future = await post(h.receiver.webhookUrl, body, signed(body, { timestamp: new Date(Date.now() + 400_000) }));
    expectRefused(future, 401, 'stale_timestamp');
    expect(future.json.error?.message).toMatch(/future/);
    expect(h.enqueued).toHaveLength(0);
  });

  it('uses the injected clock for the tolerance', async () => {
    const h = await start({ now: () => new Date('2026-03-01T12:00:00Z') });
    const body = JSON.stringify(sampleEvent());
    const ok = await post(h.receiver.webhookUrl, body, signed(body, { timestamp: new Date('2026-03-01T11:58:00Z') }));
    expect(ok.status).toBe(202);
  });

  it('token auth: missing 401, wrong 401, right 202; rotation accepts either value', async () => {
    const h = await start({ auth: { kind: 'token', header: 'X-Webhook-Token', value: [TOKEN, `${TOKEN}-next`] } });
    const body = JSON.stringify(sampleEvent());
    const missing = await post(h.receiver.webhookUrl, body);
    expectRefused(missing, 401, 'missing_token');
    const wrong = await post(h.receiver.webhookUrl, body, { 'x-webhook-token': `${TOKEN.slice(0, -1)}X` });
    expectRefused(wrong, 401, 'invalid_token');
    const short = await post(h.receiver.webhookUrl, body, { 'x-webhook-token': 'x' });
    expect(short.status).toBe(401);
    expect(h.enqueued).toHaveLength(0);
    expect((await post(h.receiver.webhookUrl, body, { 'x-webhook-token': TOKEN })).status).toBe(202);
    const body2 = JSON.stringify(sampleEvent());
    expect((await post(h.receiver.webhookUrl, body2, { 'x-webhook-token': `${TOKEN}-next` })).status).toBe(202);
    expect(h.enqueued).toHaveLength(2);
  });

  it('unauthenticated mode only with allowUnauthenticated: true', async () => {
    await expect(start({ auth: { kind: 'none' } })).rejects.toThrow(/allowUnauthenticated/);
    const h = await start({ auth: { kind: 'none' }, allowUnauthenticated: true });
    expect((await post(h.receiver.webhookUrl, JSON.stringify(sampleEvent()))).status).toBe(202);
  });

  it('refuses a misconfiguration at start', async () => {
    await expect(start({ auth: { kind: 'standard-webhooks', secrets: [] } })).rejects.toThrow(TypeError);
    await expect(start({ auth: { kind: 'standard-webhooks', secrets: ['whsec_***'] } })).rejects.toThrow(TypeError);
    await expect(start({ auth: { kind: 'token', header: 'x-token', value: 'short' } })).rejects.toThrow(TypeError);
  });
});

describe('webhook receiver: malformed requests', () => {
  it('415 for a non-JSON content type, a foreign charset or a compressed body', async () => {
    const h = await start();
    const body = JSON.stringify(sampleEvent());
    const variants: Array<Record<string, string>> = [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=iso-8859-1' },
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    ];
    for (const headers of variants) {
      const res = await post(h.receiver.webhookUrl, body, { ...signed(body), ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(415);
      expect(res.json.error?.code).toBe('unsupported_media_type');
    }
    const noType = await request(h.receiver.webhookUrl, { method: 'POST', body, headers: signed(body) });
    expect(noType.statusCode).toBe(415);
    await noType.body.dump();
    // application/*+json and an explicit utf-8 charset are JSON
    const ok = await post(h.receiver.webhookUrl, body, {
      ...signed(body),
      'content-type': 'application/cloudevents+json; charset=UTF-8',
    });
    expect(ok.status).toBe(202);
    expect(h.enqueued).toHaveLength(1);
  });

  it('400 for malformed JSON and for bytes that are not UTF-8', async () => {
    const h = await start();
    const bad = '{"event": "signal.created", ';
    const res = await post(h.receiver.webhookUrl, bad, signed(bad));
    expectRefused(res, 400, 'invalid_json');
    const latin = Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]);
    const res2 = await post(
      h.receiver.webhookUrl,
      latin,
      signWebhook({ id: 'm', timestamp: new Date(), body: latin, secret }),
    );
    expect(res2.status).toBe(400);
    expect(h.enqueued).toHaveLength(0);
  });

  it('422 naming the field for a schema mismatch', async () => {
    const h = await start();
    const base = sampleEvent();
    const cases: Array<[unknown, string]> = [
      [{ ...base, signal: { ...base.signal, id: undefined } }, 'signal.id'],
      [{ ...base, signal: { ...base.signal, id: 'has spaces/and slashes' } }, 'signal.id'],
      [{ ...base, signal: { ...base.signal, detected_at: 'yesterday' } }, 'signal.detected_at'],
      [{ ...base, signal: { ...base.signal, company: { name: 'Acme' } } }, 'signal.company.domain'],
      [{ ...base, signal: { ...base.signal, type: 42 } }, 'signal.type'],
      [{ ...base, signal: 'not an object' }, 'signal'],
      [{ ...base, event: undefined }, 'event'],
    ];
    for (const [event, field] of cases) {
      const res = await postSigned(h, event);
      expect(res.status, field).toBe(422);
      expect(res.json.error).toMatchObject({ code: 'validation_error', field });
      expect(res.json.error?.message).toContain(field);
    }
    const arr = await postSigned(h, [1, 2]);
    expect(arr.status).toBe(422);
    expect(h.enqueued).toHaveLength(0);
  });

  it('404 for another path, 405 for another method', async () => {
    const h = await start();
    const res = await post(`${h.receiver.url}/elsewhere`, '{}');
    expect(res.status).toBe(404);
    const get = await request(h.receiver.webhookUrl);
    expect(get.statusCode).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    await get.body.dump();
  });
});

describe('webhook receiver: body size', () => {
  const LIMIT = 64 * 1024;

  function bigEvent(size: number): string {
    const e = sampleEvent();
    return JSON.stringify({ ...e, signal: { ...e.signal, data: { summary: 'x'.repeat(size) } } });
  }

  it('413 for a declared Content-Length over the limit, through a normal client', async () => {
    const h = await start({ maxBodyBytes: LIMIT });
    const body = bigEvent(LIMIT + 10);
    const res = await post(h.receiver.webhookUrl, body, signed(body));
    expectRefused(res, 413, 'payload_too_large');
    expect(h.enqueued).toHaveLength(0);
    // A body just under the limit passes.
    const fits = bigEvent(LIMIT - 1000);
    expect((await post(h.receiver.webhookUrl, fits, signed(fits))).status).toBe(202);
  });

  /** Opens a raw socket, sends `head`, then streams `chunk` until the server answers or closes; reports both. */
  function rawUpload(port: number, head: string, chunk: Buffer, maxChunks: number) {
    return new Promise<{ response: string; written: number; closed: boolean }>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      let response = '';
      let written = 0;
      let stop = false;
      const finish = (closed: boolean) => {
        if (stop) return;
        stop = true;
        resolve({ response, written, closed });
      };
      socket.on('data', (d) => {
        response += d.toString('latin1');
      });
      socket.on('error', () => {});
      socket.on('close', () => finish(true));
      socket.write(head);
      let n = 0;
      const pump = () => {
        while (!stop && n < maxChunks) {
          n++;
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      socket.on('connect', pump);
      setTimeout(() => finish(false), 5_000).unref();
    });
  }

  it('413 as soon as a declared length is over the limit, reading no further and closing', async () => {
    const h = await start({ maxBodyBytes: LIMIT });
    const bytesRead: number[] = [];
    h.receiver.server.on('connection', (s: net.Socket) => s.on('close', () => bytesRead.push(s.bytesRead)));
    const body = bigEvent(10 * LIMIT);
    const head =
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      Object.entries(signed(body))
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const result = await rawUpload(h.receiver.port, head, Buffer.alloc(16 * 1024, 0x78), 640);
    expect(result.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.response).toMatch(/connection: close/i);
    expect(result.closed).toBe(true);
    expect(h.enqueued).toHaveLength(0);
    await vi.waitFor(() => expect(bytesRead).toHaveLength(1)); // the server side of the socket has closed
    // At most what was already in flight when the headers were parsed; never the 10 MiB offered.
    expect(bytesRead[0]!).toBeLessThan(LIMIT + 256 * 1024);
    expect(result.written).toBeLessThan(10 * 1024 * 1024);
  });

  it('413 for a chunked body that grows past the limit while streaming, then the connection is closed', async () => {
    const h = await start({ maxBodyBytes: LIMIT });
    const bytesRead: number[] = [];
    h.receiver.server.on('connection', (s: net.Socket) => s.on('close', () => bytesRead.push(s.bytesRead)));
    const head =
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` + `Transfer-Encoding: chunked\r\n\r\n`;
    const data = Buffer.alloc(8 * 1024, 0x78);
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const result = await rawUpload(h.receiver.port, head, chunk, 4096); // up to 32 MiB offered
    expect(result.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.response).toContain('payload_too_large');
    expect(result.closed).toBe(true);
    expect(h.enqueued).toHaveLength(0);
    await vi.waitFor(() => expect(bytesRead).toHaveLength(1)); // the server side of the socket has closed
    // Read at most the limit plus what was in flight when it was crossed (socket buffers), never the 32 MiB offered.
    expect(bytesRead[0]!).toBeLessThan(LIMIT + 512 * 1024);
    expect(result.written).toBeLessThan(32 * 1024 * 1024);
  });
});
