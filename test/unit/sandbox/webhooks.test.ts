import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../sandbox/index.ts';
import { ACCOUNT, call, charged, type Receiver, receiver, start } from './helpers.ts';

let sb: Sandbox | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await sb?.stop();
  await rx?.close();
  sb = undefined;
  rx = undefined;
});

/** Standard Webhooks check by hand: HMAC-SHA256 of id.timestamp.body with the base64-decoded secret. */
function expectSigned(secret: string, headers: Record<string, unknown>, body: string): void {
  const id = String(headers['webhook-id']);
  const ts = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  expect(headers['webhook-signature']).toBe(`v1,${mac}`);
  expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(60);
  // and the reference implementation agrees
  expect(() => new Webhook(secret).verify(body, headers as Record<string, string>)).not.toThrow();
}

describe('webhook subscriptions', () => {
  it('create, list, get, update, delete: all free, secrets shown only at creation', async () => {
    sb = await start();
    const created = await call(sb, 'POST', '/v1/webhooks', {
      url: 'https://example.com/hooks',
      signal_types: ['news', 'sec-8k'],
      description: 'deals',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      webhook_id: expect.stringMatching(/^wh_[0-9a-f]+$/),
      url: 'https://example.com/hooks',
      signal_types: ['news', 'sec-8k'],
      description: 'deals',
      status: 'active',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const id = created.json.webhook_id;
    const list = await call(sb, 'GET', '/v1/webhooks');
    expect(list.json.webhooks).toHaveLength(1);
    expect(list.json.webhooks[0].secret).toBeUndefined();
    const patched = await call(sb, 'PATCH', `/v1/webhooks/${id}`, { status: 'paused', signal_types: ['news'] });
    expect(patched.json).toMatchObject({ status: 'paused', signal_types: ['news'], url: 'https://example.com/hooks' });
    expect((await call(sb, 'GET', `/v1/webhooks/${id}`)).json.status).toBe('paused');
    const bad = await call(sb, 'PATCH', `/v1/webhooks/${id}`, { status: 'sleeping' });
    expect(bad.status).toBe(422);
    expect(bad.json.error.field).toBe('status');
    const del = await call(sb, 'DELETE', `/v1/webhooks/${id}`);
    expect(del.json).toEqual({ webhook_id: id, deleted: true });
    expect((await call(sb, 'GET', `/v1/webhooks/${id}`)).status).toBe(404);
    expect((await call(sb, 'DELETE', `/v1/webhooks/${id}`)).status).toBe(404);
    // another account cannot see a subscription
    const other = await start({
      accounts: [
        { id: 'x', keys: ['kx'], credits: 10 },
        { id: 'y', keys: ['ky'], credits: 10 },
      ],
    });
    try {
      const mine = await call(other, 'POST', '/v1/webhooks', { url: 'http://a.b/c', signal_types: [] }, { key: 'kx' });
      expect((await call(other, 'GET', `/v1/webhooks/${mine.json.webhook_id}`, undefined, { key: 'ky' })).status).toBe(
        404,
      );
      expect((await call(other, 'GET', '/v1/webhooks', undefined, { key: 'ky' })).json.webhooks).toEqual([]);
    } finally {
      await other.stop();
    }
    expect(sb.ledger.total()).toBe(0);
  });

  it('delivers signal.created events, signed, to matching active subscriptions; 1 credit each', async () => {
    sb = await start();
    rx = await receiver();
    const news = await call(sb, 'POST', '/v1/webhooks', { url: rx.url, signal_types: ['news'] });
    const paused = await call(sb, 'POST', '/v1/webhooks', { url: rx.url, signal_types: [] });
    await call(sb, 'PATCH', `/v1/webhooks/${paused.json.webhook_id}`, { status: 'paused' });
    const emitted = sb.emitSignals({ count: 3, signal_types: ['news'] });
    sb.emitSignals({ count: 2, signal_types: ['sec-8k'] }); // matches nothing active
    await sb.webhooksSettled();
    expect(rx.received).toHaveLength(3);
    const ids = new Set<string>();
    for (const r of rx.received) {
      expect(r.headers['content-type']).toBe('application/json');
      expectSigned(news.json.secret, r.headers, r.body);
      const event = JSON.parse(r.body);
      expect(event).toMatchObject({
        event: 'signal.created',
        webhook_id: news.json.webhook_id,
        signal: {
          id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
          type: 'news',
          company: { name: expect.any(String), domain: expect.any(String) },
          title: expect.any(String),
          source: 'news',
          data: { summary: expect.any(String) },
        },
      });
      expect(event.signal.title).not.toBe('');
      expect(Date.parse(event.delivered_at)).not.toBeNaN();
      ids.add(event.signal.id);
    }
    expect([...ids].sort()).toEqual(emitted.map((s) => s.signal_id).sort());
    expect(sb.ledger.total(ACCOUNT)).toBe(3);
    expect(sb.deliveries.filter((d) => d.delivered)).toHaveLength(3);
    // emitted signals can be looked up by id (free) and show up in their company's enrich
    const look = await call(sb, 'GET', `/v1/signals/${emitted[0]!.signal_id}`);
    expect(look.status).toBe(200);
    expect(charged(look)).toBe(0);
    const enrich = await call(sb, 'POST', '/v1/companies/enrich', { domain: emitted[0]!.company.domain, limit: 500 });
    expect(enrich.json.signals.map((s: { signal_id: string }) => s.signal_id)).toContain(
      `sig_${emitted[0]!.signal_id.replaceAll('-', '')}`,
    );
  });

  it('retries a failed delivery on the schedule with the same webhook-id; only the success is charged', async () => {
    sb = await start({ webhookRetryDelaysMs: [0, 30, 60] });
    rx = await receiver();
    rx.answer = (n) => (n < 2 ? 503 : 204);
    await call(sb, 'POST', '/v1/webhooks', { url: rx.url, signal_types: ['website-intelligence'] });
    sb.emitSignals({ count: 1, signal_types: ['website-intelligence'] });
    await sb.webhooksSettled();
    expect(rx.received.map((r) => r.status)).toEqual([503, 503, 204]);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(sb.deliveries.map((d) => [d.attempt, d.status_code, d.credits])).toEqual([
      [1, 503, 0],
      [2, 503, 0],
      [3, 204, 1],
    ]);
    expect(sb.ledger.total()).toBe(1);
  });

  it('gives up after the last retry (connection refused), charging nothing', async () => {
    sb = await start({ webhookRetryDelaysMs: [0, 10] });
    rx = await receiver();
    const url = rx.url;
    await rx.close();
    await call(sb, 'POST', '/v1/webhooks', { url, signal_types: [] });
    sb.emitSignals({ count: 1 });
    await sb.webhooksSettled();
    expect(sb.deliveries).toHaveLength(2);
    expect(sb.deliveries.every((d) => d.status_code === null && d.error !== null && !d.delivered)).toBe(true);
    expect(sb.ledger.total()).toBe(0);
  });

  it('test endpoint: one signed attempt now, free', async () => {
    sb = await start();
    rx = await receiver();
    const sub = await call(sb, 'POST', '/v1/webhooks', { url: rx.url, signal_types: ['funding-round'] });
    const r = await call(sb, 'POST', `/v1/webhooks/${sub.json.webhook_id}/test`);
    expect(r.json).toEqual({ delivered: true, status_code: 200, attempts: 1 });
    expect(charged(r)).toBe(0);
    expect(rx.received).toHaveLength(1);
    expectSigned(sub.json.secret, rx.received[0]!.headers, rx.received[0]!.body);
    const event = JSON.parse(rx.received[0]!.body);
    expect(event.test).toBe(true);
    expect(event.signal.type).toBe('funding-round');
    rx.answer = () => 500;
    const failed = await call(sb, 'POST', `/v1/webhooks/${sub.json.webhook_id}/test`, {});
    expect(failed.json).toEqual({ delivered: false, status_code: 500, attempts: 1 });
    expect(sb.ledger.total()).toBe(0);
  });

  it('keeps the last 10,000 emitted signals', async () => {
    sb = await start();
    const first = sb.emitSignals({ count: 5, domain: 'acme-robotics.com' });
    expect((await call(sb, 'GET', `/v1/signals/${first[0]!.signal_id}`)).status).toBe(200);
    const later = sb.emitSignals({ count: 10_000 });
    expect(later).toHaveLength(10_000);
    expect((await call(sb, 'GET', `/v1/signals/${first[4]!.signal_id}`)).status).toBe(404);
    expect((await call(sb, 'GET', `/v1/signals/${later[0]!.signal_id}`)).status).toBe(200);
    const enrich = await call(sb, 'POST', '/v1/companies/enrich', { domain: 'acme-robotics.com', limit: 500 });
    const ids = enrich.json.signals.map((s: { signal_id: string }) => s.signal_id);
    expect(ids).not.toContain(`sig_${first[0]!.signal_id.replaceAll('-', '')}`);
  });

  it('does not deliver when the account cannot pay for the event', async () => {
    sb = await start({ accounts: [{ id: 'broke', keys: ['kb'], credits: 0 }] });
    rx = await receiver();
    await call(sb, 'POST', '/v1/webhooks', { url: rx.url, signal_types: [] }, { key: 'kb' });
    sb.emitSignals({ count: 1 });
    await sb.webhooksSettled();
    expect(rx.received).toHaveLength(0);
    expect(sb.deliveries[0]).toMatchObject({ delivered: false, error: 'insufficient_credits' });
  });
});
