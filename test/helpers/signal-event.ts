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
