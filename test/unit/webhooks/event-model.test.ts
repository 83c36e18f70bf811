import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignalEvent, ValidationError } from '../../../connectors/signal-api/index.ts';
import type { SignalCreatedEvent } from '../../../connectors/webhooks/events.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../intake/index.ts';
import { acmeWireEvent } from '../../helpers/signal-event.ts';

const TOKEN = 'tok_event_model_0123456789';
let receiver: WebhookReceiver;
const enqueued: SignalCreatedEvent[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver({
    port: 0,
    auth: { kind: 'token', header: 'x-intake-token', value: TOKEN },
    enqueue: async (event) => {
      enqueued.push(event);
      return undefined;
    },
  });
});

afterAll(async () => {
  await receiver.close();
});

/** What the receiver hands on for this body (it must accept it). */
async function throughReceiver(body: string): Promise<SignalCreatedEvent> {
  const before = enqueued.length;
  const res = await request(receiver.webhookUrl, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-intake-token': TOKEN },
  });
  const text = await res.body.text();
  expect(res.statusCode, text).toBe(202);
  expect(enqueued).toHaveLength(before + 1);
  return enqueued[before]!;
}

const UUID = '2f1c7a9e-5b3d-4c8e-9a1f-0e2d3c4b5a69';

/** Bodies in the forms the spec admits, each once with every optional field and once with the fewest. */
const bodies: Record<string, unknown> = {
  full: acmeWireEvent({
    id: 'sig_0a1b2c',
    domain: 'Acme.COM ',
    detected_at: '2026-03-01T12:00:00.000+00:00',
    delivered_at: '2026-03-01T14:00:05.250+02:00',
  }),
  fewest: {
    event: 'signal.created',
    signal: { id: UUID, type: 'news', company: { domain: 'acme.com' }, detected_at: '2026-03-01T12:00:00Z' },
  },
  'empty title and nulls': {
    event: 'signal.created',
    signal: {
      id: 'sig_2',
      type: 'hiring-trends',
      company: { name: null, domain: 'WWW.Acme.com' },
      title: '  ',
      detected_at: '2026-03-01T13:30:00+01:30',
      source: null,
      data: { summary: 'From the summary' },
    },
    webhook_id: null,
    delivered_at: null,
  },
};

describe('the signal.created event: one model for the client and the receiver', () => {
  for (const [name, event] of Object.entries(bodies)) {
    it(`gives identical output through parseSignalEvent and the receiver (${name})`, async () => {
      const body = JSON.stringify(event);
      const fromClient = parseSignalEvent(body);
      const fromReceiver = await throughReceiver(body);
      expect(fromReceiver).toStrictEqual(fromClient);
      expect(JSON.stringify(fromReceiver)).toBe(JSON.stringify(fromClient));
    });
  }

  it('normalizes: UTC Z with milliseconds, lower-case domain, title from the summary, unknown fields kept', () => {
    expect(parseSignalEvent(bodies['full'])).toStrictEqual(
      acmeWireEvent({
        id: 'sig_0a1b2c',
        domain: 'acme.com',
        detected_at: '2026-03-01T12:00:00.000Z',
        delivered_at: '2026-03-01T12:00:05.250Z',
      }),
    );
    expect(parseSignalEvent(bodies['fewest'])).toStrictEqual({
      event: 'signal.created',
      signal: {
        id: UUID,
        type: 'news',
        company: { name: '', domain: 'acme.com' },
        title: '',
        detected_at: '2026-03-01T12:00:00.000Z',
        data: {},
      },
    });
    const nulls = parseSignalEvent(bodies['empty title and nulls']);
    expect(nulls.signal.title).toBe('From the summary');
    expect(nulls.signal.detected_at).toBe('2026-03-01T12:00:00.000Z');
    expect(nulls.signal.company).toStrictEqual({ name: '', domain: 'www.acme.com' });
    expect('source' in nulls.signal).toBe(false);
    expect('webhook_id' in nulls || 'delivered_at' in nulls).toBe(false);
  });

  it('refuses the same bodies in both: the client with a ValidationError, the receiver with 422 naming the field', async () => {
    const bad = { event: 'signal.created', signal: { id: 'sig_1', type: 'news', company: { domain: 'a.com' } } };
    expect(() => parseSignalEvent(bad)).toThrow(ValidationError);
    expect(() => parseSignalEvent(bad)).toThrow(/signal\.detected_at/);
    const res = await request(receiver.webhookUrl, {
      method: 'POST',
      body: JSON.stringify(bad),
      headers: { 'content-type': 'application/json', 'x-intake-token': TOKEN },
    });
    expect(res.statusCode).toBe(422);
    expect(((await res.body.json()) as { error: { field: string } }).error.field).toBe('signal.detected_at');
  });
});
