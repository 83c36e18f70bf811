/** The oracle of contact enrichment: what `POST /v1/contacts/enrich` finds and charges, known without calling it. */
import { describe, expect, it } from 'vitest';
import { call, charged, startStoppedAfterEach } from './helpers.ts';

const start = startStoppedAfterEach();

describe('truth.contactSignals', () => {
  it('gives the signals, employer and status the endpoint answers with, and its charge of 2 per signal', async () => {
    const sb = await start();
    const people = sb.truth.intentContacts({ topic_ids: ['b2b_17'] }).slice(0, 12);
    const inputs = [
      ...people.flatMap((p) => (p.contact.email ? [p.contact.email] : [])),
      'nobody@gmail.com',
      'not an address',
    ];
    const truths = sb.truth.contactSignals(inputs);
    expect(truths.filter((t) => t.status === 'ok').length).toBeGreaterThan(3);
    expect(truths.at(-2)!.status).toBe('not_found');
    expect(truths.at(-1)!.status).toBe('invalid');
    for (const truth of truths) {
      const answer = await call(sb, 'POST', '/v1/contacts/enrich', { contact_email: truth.input, limit: 500 });
      const expectedStatus = { ok: 200, not_found: 404, invalid: 422 }[truth.status];
      expect(answer.status, truth.input).toBe(expectedStatus);
      expect(charged(answer)).toBe(2 * truth.signals.length);
      if (truth.status !== 'ok') continue;
      expect(answer.json.company.domain).toBe(truth.domain);
      expect(answer.json.contact_signals.map((s: { signal_id: string }) => s.signal_id)).toEqual(
        truth.signals.map((s) => s.signal_id),
      );
    }
  });
});
