/**
 * A feed's flat tables (docs/contacts-and-feeds.md): one row per delivered item with the documented fields as typed
 * columns, and nothing of the item lost: a field without a column, or of another type than its column, stays in
 * `extra` where the item had it.
 */
import { describe, expect, it } from 'vitest';
import { FEED_TABLES, feedRow } from '../../../contract/tables/feeds.ts';

describe('feed table rows', () => {
  it('a company search item: typed columns, the rest in extra', () => {
    const item = {
      name: 'Acme',
      domain: 'acme.com',
      signal_count: 3,
      latest_signal_at: '2026-03-01T06:00:00+00:00',
      latest_signal_id: 'a-1',
      industries: ['Software'],
      hq: { city: 'Oslo' },
    };
    const row = feedRow('companies', 'domain:acme.com', item);
    expect(row).toEqual({
      key: 'domain:acme.com',
      domain: 'acme.com',
      name: 'Acme',
      signal_count: 3,
      latest_signal_at: Date.UTC(2026, 2, 1, 6),
      latest_signal_id: 'a-1',
      industries: ['Software'],
      extra: { hq: { city: 'Oslo' } },
    });
    expect(Object.keys(row)).toEqual(FEED_TABLES.companies.columns.map((column) => column.name));
    // The item itself is left as it was (the JSONL line is written from it).
    expect(item.hq).toEqual({ city: 'Oslo' });
  });

  it('a value of another type than its column stays in extra, where the item had it', () => {
    const row = feedRow('companies', 'domain:x.com', {
      domain: 'x.com',
      signal_count: '7',
      industries: ['Software', 4],
      latest_signal_at: 'yesterday',
    });
    expect(row).toMatchObject({ signal_count: null, industries: null, latest_signal_at: null });
    expect(row['extra']).toEqual({ signal_count: '7', industries: ['Software', 4], latest_signal_at: 'yesterday' });
  });

  it('a buyer-intent item: the person and the employer flattened, their unnamed fields kept nested in extra', () => {
    const row = feedRow('contacts', 'b2b_17|email:ann@acme.com', {
      topic_id: 'b2b_17',
      intent_score: 81.5,
      contact: {
        first_name: 'Ann',
        last_name: 'Lee',
        email: 'ann@acme.com',
        email_validation_status: null,
        mobile_phone: null,
        seniority: 'Vp',
      },
      company: { name: 'Acme', domain: 'acme.com', industry: 'Software', revenue_bucket: '$10M-$50M' },
    });
    expect(row).toMatchObject({
      key: 'b2b_17|email:ann@acme.com',
      topic_id: 'b2b_17',
      intent_score: 81.5,
      first_name: 'Ann',
      email: 'ann@acme.com',
      email_validation_status: null,
      mobile_phone: null,
      seniority: 'Vp',
      company_name: 'Acme',
      company_domain: 'acme.com',
      company_industry: 'Software',
      signal_count: null,
      latest_signal_at: null,
    });
    expect(row['extra']).toEqual({ company: { revenue_bucket: '$10M-$50M' } });
    expect(Object.keys(row)).toEqual(FEED_TABLES.contacts.columns.map((column) => column.name));
  });
});
