/**
 * A `signal.created` body as the service delivers it (news about Acme Robotics, detected and delivered now), for
 * whatever posts events to a receiver: the webhook-intake benchmark and the CLI's end-to-end test.
 */
export function signalCreatedEvent(signalId: string) {
  return {
    event: 'signal.created',
    signal: {
      id: signalId,
      type: 'news',
      company: { name: 'Acme Robotics', domain: 'Acme-Robotics.com' },
      title: 'Acme Robotics opens an office in Lyon',
      detected_at: new Date().toISOString().replace('Z', '+00:00'),
      source: 'news',
      data: { headline: 'Acme Robotics opens an office in Lyon', publisher: 'Bench Wire', sentiment: 'positive' },
    },
    webhook_id: null,
    delivered_at: new Date().toISOString(),
  };
}
