/**
 * What scheduled feeds rely on in the sandbox: search answers capped at 100 newest-first with the id of each item's
 * newest matching signal, an oracle that knows every match beyond the cap, and buyer-intent contacts that appear over
 * time when `intentSurfacing` asks for it.
 */
import { describe, expect, it } from 'vitest';
import { call, movableClock, startStoppedAfterEach, T0 } from './helpers.ts';

const start = startStoppedAfterEach();
const DAY = 86_400_000;

describe('company and contact search', () => {
  it('returns at most 100 companies, the newest of every match the oracle knows, each with its newest signal id', async () => {
    const sb = await start();
    const body = { detected_after: new Date(T0 - 30 * DAY).toISOString() };
    const all = sb.truth.companySearch(body);
    expect(all.length).toBeGreaterThan(100);
    const answer = await call(sb, 'POST', '/v1/companies/search', { ...body, limit: 100 });
    expect(answer.status).toBe(200);
    expect(answer.json.companies).toHaveLength(100);
    expect(answer.json.companies).toEqual(all.slice(0, 100));
    expect(answer.headers.get('x-credits-charged')).toBe('100');
    const first = answer.json.companies[0];
    const signal = await call(sb, 'GET', `/v1/signals/${first.latest_signal_id}`);
    expect(signal.status).toBe(200);
    expect(signal.json.company.domain).toBe(first.domain);
    expect(Date.parse(signal.json.detected_at)).toBe(Date.parse(first.latest_signal_at));
  });

  it('contact search items carry their newest person-level signal id', async () => {
    const sb = await start();
    const body = { detected_after: new Date(T0 - 365 * DAY).toISOString(), limit: 5 };
    const answer = await call(sb, 'POST', '/v1/contacts/search', body);
    expect(answer.json.contacts.length).toBe(5);
    expect(answer.json.contacts).toEqual(sb.truth.contactSearch(body).slice(0, 5));
    const signal = await call(sb, 'GET', `/v1/signals/${answer.json.contacts[0].latest_signal_id}`);
    expect(Date.parse(signal.json.detected_at)).toBe(Date.parse(answer.json.contacts[0].latest_signal_at));
  });
});

describe('buyer-intent contacts over time (intentSurfacing)', () => {
  it('shows a contact only once its intent surfaced, in every page and in the oracle', async () => {
    const clock = movableClock(T0);
    const sb = await start({ clock, intentSurfacing: { from: T0, days: 10, share: 0.3 } });
    const body = { topic_ids: ['b2b_17', 'b2b_4242'], page_size: 1000 };
    const before = await call(sb, 'POST', '/v1/buyer-intent/contacts', body);
    expect(before.json.contacts).toEqual(sb.truth.intentContacts(body));
    clock.advance(5 * DAY);
    const middle = sb.truth.intentContacts(body);
    clock.advance(6 * DAY);
    const after = await call(sb, 'POST', '/v1/buyer-intent/contacts', body);
    expect(after.json.contacts).toEqual(sb.truth.intentContacts(body));
    expect(before.json.contacts.length).toBeLessThan(middle.length);
    expect(middle.length).toBeLessThan(after.json.contacts.length);
    // Without the option every contact shows intent at any time.
    const plain = await start({ clock });
    expect((await call(plain, 'POST', '/v1/buyer-intent/contacts', body)).json.contacts).toHaveLength(
      after.json.contacts.length,
    );
  });
});
