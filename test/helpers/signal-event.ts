import { randomUUID } from 'node:crypto';
import { type SignalCreatedEvent, SignalCreatedEventSchema } from '../../connectors/webhooks/events.ts';

/** A fresh signal.created event about Acme (acme.com), as the service would deliver it now. */
export function acmeSignalEvent(signal: { type?: string; title: string; data: Record<string, unknown> }) {
  const { type = 'news', title, data } = signal;
  return SignalCreatedEventSchema.parse({
    event: 'signal.created',
    signal: {
      id: randomUUID(),
      type,
      company: { name: 'Acme', domain: 'acme.com' },
      title,
      detected_at: '2026-03-01T12:00:00.000+00:00',
      source: 'news',
      data,
    },
    webhook_id: 'wh_test',
    delivered_at: new Date().toISOString(),
  }) satisfies SignalCreatedEvent;
}

/**
 * A signal.created body about Acme as it arrives on the wire: every optional field set, an unknown field at each
 * level. The parameters are the fields the event model rewrites, so the same call with their normalized values
 * gives what the model must output for it.
 */
export function acmeWireEvent(fields: { id: string; domain: string; detected_at: string; delivered_at: string }) {
  return {
    event: 'signal.created',
    signal: {
      id: fields.id,
      type: 'news',
      company: { name: 'Acme', domain: fields.domain, linkedin_url: '/company/acme' },
      title: 'Acme raises a Series B',
      detected_at: fields.detected_at,
      source: 'news',
      data: { summary: 'Acme raised $20M', amount: 20_000_000 },
      extra_signal_field: 'kept',
    },
    webhook_id: 'wh_abc',
    delivered_at: fields.delivered_at,
    extra_top_field: { nested: true },
  };
}
