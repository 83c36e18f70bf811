/** Webhook subscriptions: management through the client, deliveries received by a local server. */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignalEvent } from '../../connectors/signal-api/index.ts';
import { ACCOUNT, client, type Receiver, receiver, type Sandbox, sandbox, type TestClient } from './helpers.ts';

let sb: Sandbox;
let c: TestClient;
let hook: Receiver;

beforeAll(async () => {
  sb = await sandbox({ webhookRetryDelaysMs: [0, 50, 100, 200] });
  c = client(sb);
  hook = await receiver();
});

afterAll(async () => {
  await c?.close();
  await sb?.stop();
  await hook?.close();
});

describe('webhooks', () => {
  it('create, list, update, test, deliver, delete', async () => {
    const before = sb.ledger.total(ACCOUNT);
    const wh = await c.createWebhook({ url: hook.url, signal_types: ['news', 'sec-8k'], description: 'contract' });
    expect(wh.webhook_id).toMatch(/^wh_[0-9a-f]+$/);
    expect(wh.secret).toMatch(/^whsec_/);
    expect(wh.status).toBe('active');
    expect(wh.credits).toBe(0);

    const list = await c.listWebhooks();
    const listed = list.webhooks.find((w) => w.webhook_id === wh.webhook_id);
    expect(listed?.url).toBe(hook.url);
    expect(listed?.secret).toBeUndefined();

    // paused: nothing delivered
    expect((await c.updateWebhook(wh.webhook_id, { status: 'paused' })).status).toBe('paused');
    sb.emitSignals({ count: 2, signal_types: ['news'] });
    await sb.webhooksSettled();
    expect(hook.deliveries).toHaveLength(0);
    expect((await c.updateWebhook(wh.webhook_id, { status: 'active' })).status).toBe('active');
    expect(sb.ledger.total(ACCOUNT)).toBe(before);

    // the first attempt of every event fails; retries are free, each event is charged once
    const failedFirst = new Set<number>();
    hook.answer = (n) => {
      if (n % 2 === 0) {
        failedFirst.add(n);
        return 500;
      }
      return 200;
    };
    const emitted = sb.emitSignals({ count: 3, signal_types: ['news'] });
    await sb.webhooksSettled();
    const got = await hook.waitFor(3);
    expect(hook.deliveries).toHaveLength(3);
    const attempts = sb.deliveries.filter((d) => d.webhook_id === wh.webhook_id && !d.test);
    expect(attempts.filter((d) => !d.delivered)).toHaveLength(3);
    expect(attempts.filter((d) => d.delivered).map((d) => d.credits)).toEqual([1, 1, 1]);
    expect(failedFirst.size).toBe(3);
    const verifier = new Webhook(wh.secret!);
    const ids = new Set<string>();
    for (const d of got) {
      const headers = {
        'webhook-id': String(d.headers['webhook-id']),
        'webhook-timestamp': String(d.headers['webhook-timestamp']),
        'webhook-signature': String(d.headers['webhook-signature']),
      };
      expect(() => verifier.verify(d.body, headers)).not.toThrow();
      const event = parseSignalEvent(d.body);
      expect(event.event).toBe('signal.created');
      expect(event.webhook_id).toBe(wh.webhook_id);
      expect(event.signal.type).toBe('news');
      expect(event.signal.detected_at).toMatch(/Z$/);
      expect(event.signal.company.domain).toBe(event.signal.company.domain.toLowerCase());
      ids.add(event.signal.id);
    }
    expect([...ids].sort()).toEqual(emitted.map((s) => s.signal_id).sort());
    expect(sb.ledger.total(ACCOUNT) - before).toBe(3);

    // an event of an unsubscribed type is not delivered
    hook.answer = () => 200;
    sb.emitSignals({ count: 1, signal_types: ['hiring-trends'] });
    await sb.webhooksSettled();
    expect(hook.deliveries).toHaveLength(3);

    // the test event is delivered now and is free
    const beforeTest = sb.ledger.total(ACCOUNT);
    const test = await c.testWebhook(wh.webhook_id);
    expect(test.delivered).toBe(true);
    expect(test.status_code).toBe(200);
    expect(test.credits).toBe(0);
    await hook.waitFor(4);
    expect(sb.ledger.total(ACCOUNT)).toBe(beforeTest);
    expect(parseSignalEvent(hook.deliveries[3]!.body)['test']).toBe(true);

    const del = await c.deleteWebhook(wh.webhook_id);
    expect(del).toMatchObject({ webhook_id: wh.webhook_id, deleted: true, credits: 0 });
    expect((await c.listWebhooks()).webhooks.some((w) => w.webhook_id === wh.webhook_id)).toBe(false);
    await expect(c.deleteWebhook(wh.webhook_id)).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});
