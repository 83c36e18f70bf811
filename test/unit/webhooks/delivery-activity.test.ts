import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDeliveryActivities } from '../../../activities/webhook-delivery.ts';
import { collectorPartKey } from '../../../activities/webhook-layout.ts';
import { openStore } from '../../../config/storage.ts';
import {
  parseDestinations,
  webhookDeliveryConfig,
  webhookDeliveryConfigFromEnv,
} from '../../../config/webhook-destinations.ts';
import { WebhookConfigError } from '../../../connectors/errors.ts';
import { parseRetryAfter } from '../../../connectors/retry-after.ts';
import { MAX_RETRY_AFTER_MS } from '../../../connectors/signal-api/limits.ts';
import { SignalCreatedEventSchema } from '../../../connectors/webhooks/events.ts';
import { generateWebhookSecret } from '../../../connectors/webhooks/signature.ts';

const secret = generateWebhookSecret();
let server: Server;
let port: number;
let dir: string;
const seen: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = [];
const routes: Record<string, (res: ServerResponse) => void> = {
  '/ok': (res) => res.writeHead(204).end(),
  '/gone': (res) => res.writeHead(410).end('gone'),
  '/redirect': (res) => res.writeHead(307, { location: 'http://169.254.169.254/' }).end(),
  '/throttle': (res) => res.writeHead(429, { 'retry-after': '7' }).end('slow down'),
  '/unavailable': (res) => res.writeHead(503, { 'retry-after': 'Wed, 21 Oct 2099 07:28:00 GMT' }).end(),
  '/bad': (res) => res.writeHead(400).end('{"error":"nope"}'),
  '/hang': () => {},
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      (routes[req.url ?? ''] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-delivery-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

function activities(extra: { timeout_ms?: number } = {}) {
  const names = Object.keys(routes).map((p) => p.slice(1));
  const config = webhookDeliveryConfig({
    destinations: [
      ...names.map((n) => ({ id: n, kind: 'http', url: `http://127.0.0.1:${port}/${n}`, secret, ...extra })),
      { id: 'refused', kind: 'http', url: 'http://127.0.0.1:1/', secret },
      { id: 'private', kind: 'http', url: 'http://10.1.2.3/hook', secret },
    ],
    deadLetterUrl: pathToFileURL(join(dir, randomUUID())).href,
    allowlist: ['127.0.0.1/32'],
  });
  return createWebhookDeliveryActivities({ config, openStore });
}

const event = SignalCreatedEventSchema.parse({
  event: 'signal.created',
  signal: {
    id: 'sig_abc',
    type: 'news',
    company: { domain: 'acme.com' },
    detected_at: '2026-03-01T12:00:00Z',
  },
});

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

const input = (destinationId: string) => ({ destinationId, event, webhookId: 'msg_sig_abc_x', attempt: 1 });

describe('deliverToEndpoint', () => {
  it('POSTs the event signed with Standard Webhooks headers; 2xx is delivered', async () => {
    const r = await activities().deliverToEndpoint(input('ok'));
    expect(r).toMatchObject({ outcome: 'delivered', status: 204 });
    const req = seen.at(-1)!;
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe('msg_sig_abc_x');
    expect(JSON.parse(req.body)).toEqual(event);
    expect(new Webhook(secret).verify(req.body, req.headers as Record<string, string>)).toEqual(event);
  });

  it('410 disables the destination: non-retryable, recorded, and later attempts send nothing', async () => {
    const acts = activities();
    const f = await failureOf(acts.deliverToEndpoint(input('gone')));
    expect(f.type).toBe('DestinationGone');
    expect(f.nonRetryable).toBe(true);
    expect(await acts.getDestinationState({ destinationId: 'gone' })).toMatchObject({ disabled: true, status: 410 });
    const count = seen.length;
    expect(await acts.deliverToEndpoint(input('gone'))).toMatchObject({ outcome: 'disabled' });
    expect(seen.length).toBe(count);
    await acts.enableDestination({ destinationId: 'gone' });
    await failureOf(acts.deliverToEndpoint(input('gone')));
    expect(seen.length).toBe(count + 1);
  });

  it('a 3xx is a retryable failure and is not followed', async () => {
    const f = await failureOf(activities().deliverToEndpoint(input('redirect')));
    expect(f).toMatchObject({ type: 'DeliveryFailed', nonRetryable: false });
    expect(f.details?.[0]).toMatchObject({ status: 307, location: 'http://169.254.169.254/' });
  });

  it('429 and 503 carry Retry-After (seconds or a date) as retryAfterMs and nextRetryDelay', async () => {
    const f = await failureOf(activities().deliverToEndpoint(input('throttle')));
    expect(f.details?.[0]).toMatchObject({ status: 429, retryAfterMs: 7000, body: 'slow down' });
    expect(f.nextRetryDelay).toBe(7000);
    const g = await failureOf(activities().deliverToEndpoint(input('unavailable')));
    // A date in 2099 is capped: the schedule is not stretched by the destination.
    expect((g.details?.[0] as { retryAfterMs: number } | undefined)?.retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    expect(g.nextRetryDelay).toBe(MAX_RETRY_AFTER_MS);
  });

  it('other 4xx, refused connections and timeouts are retryable', async () => {
    expect(await failureOf(activities().deliverToEndpoint(input('bad')))).toMatchObject({
      type: 'DeliveryFailed',
      nonRetryable: false,
    });
    expect(await failureOf(activities().deliverToEndpoint(input('refused')))).toMatchObject({
      type: 'DeliveryFailed',
      nonRetryable: false,
    });
    // The destination never answers: only the 300 ms timeout ends this call (else the test's own limit fails it).
    const t = await failureOf(activities({ timeout_ms: 300 }).deliverToEndpoint(input('hang')));
    expect(t).toMatchObject({ type: 'DeliveryTimeout', nonRetryable: false });
  });

  it('a private destination is refused by the SSRF guard, non-retryable', async () => {
    const f = await failureOf(activities().deliverToEndpoint(input('private')));
    expect(f).toMatchObject({ type: 'DestinationBlocked', nonRetryable: true });
    expect(f.message).toContain('10.1.2.3');
  });

  it('an unknown destination is a configuration error', async () => {
    expect(await failureOf(activities().deliverToEndpoint(input('nope')))).toMatchObject({
      type: 'DestinationNotConfigured',
      nonRetryable: true,
    });
  });

  it('writes a dead letter under a deterministic key', async () => {
    const acts = activities();
    const attempts = [{ attempt: 1, at: '2026-03-01T12:00:00.000Z', ok: false, status: 500 }];
    const a = await acts.writeDeadLetter({ destinationId: 'ok', webhookId: 'm', event, attempts, reason: 'r' });
    const b = await acts.writeDeadLetter({ destinationId: 'ok', webhookId: 'm', event, attempts, reason: 'r' });
    expect(a.url).toBe(b.url);
    expect(a.url).toMatch(/\/dead-letter\/ok\/sig_abc\.json$/);
  });
});

describe('destination configuration', () => {
  it('parses destinations with defaults and refuses bad ones', () => {
    const [http, bucket] = parseDestinations([
      { id: 'crm', kind: 'http', url: 'https://crm.example/h', secret },
      { id: 'lake', kind: 'bucket', url: 's3://b/p', prefix: '/signals/' },
    ]);
    expect(http).toMatchObject({ timeout_ms: 15_000 });
    expect(bucket).toMatchObject({ max_events: 1000, max_age_ms: 600_000, prefix: 'signals' });
    expect(collectorPartKey(bucket as never, 42)).toBe('signals/collector/lake/part-00042.jsonl');
    expect(() => parseDestinations([{ id: 'x', kind: 'http', url: 'ftp://x', secret }])).toThrow(WebhookConfigError);
    expect(() => parseDestinations([{ id: 'x', kind: 'http', url: 'https://x', secret: 'plain' }])).toThrow(/whsec_/);
    expect(() =>
      parseDestinations([
        { id: 'x', kind: 'bucket', url: 'file:///tmp' },
        { id: 'x', kind: 'bucket', url: 'file:///tmp' },
      ]),
    ).toThrow(/duplicate/);
  });

  it('reads the SIGNAL_KIT_WEBHOOK_* variables', () => {
    const c = webhookDeliveryConfigFromEnv({
      SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([
        { id: 'crm', kind: 'http', url: 'https://crm.example', secret },
      ]),
      SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL: 's3://b/webhooks',
      SIGNAL_KIT_WEBHOOK_ALLOWLIST: '10.1.0.0/16, 127.0.0.1/32',
    });
    expect(c.destinations).toHaveLength(1);
    expect(c.deadLetterUrl).toBe('s3://b/webhooks');
    expect(c.allowlist).toEqual(['10.1.0.0/16', '127.0.0.1/32']);
    expect(webhookDeliveryConfigFromEnv({}).deadLetterUrl).toMatch(/^file:\/\/.*\.signal-kit\/webhooks$/);
  });

  it('parses Retry-After', () => {
    const now = new Date('2026-03-01T12:00:00Z');
    expect(parseRetryAfter('45', now)).toBe(45_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
