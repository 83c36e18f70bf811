/** `signal-kit topics search` and `signal-kit signal-types`: what a user types, and what they read back. */
import { describe, expect, it } from 'vitest';
import type { CatalogAnswer, CatalogRequest } from '../../../activities/catalog.ts';
import { UsageError } from '../../../cli/args.ts';
import { runCatalogCommand, signalTypesTable, topicsRequest, topicsTable } from '../../../cli/commands/catalog.ts';
import { ValidationError } from '../../../connectors/errors.ts';

describe('topics search arguments', () => {
  it('sends the text and a default page of 50', () => {
    expect(topicsRequest('  Payroll ', {})).toEqual({ what: 'topics', q: 'Payroll', limit: 50 });
    expect(topicsRequest('crm', { limit: '5', cursor: 'abc' })).toEqual({
      what: 'topics',
      q: 'crm',
      limit: 5,
      cursor: 'abc',
    });
  });

  it.each([
    ['', {}, /usage: signal-kit topics search TEXT/],
    ['crm', { limit: '0' }, /--limit must be a positive integer/],
    ['crm', { limit: '1001' }, /--limit must be at most 1000/],
  ])('refuses %j %j', (text, flags, message) => {
    expect(() => topicsRequest(text, flags)).toThrow(UsageError);
    expect(() => topicsRequest(text, flags)).toThrow(message);
  });
});

describe('catalog tables', () => {
  it('lines the columns up under their titles and says how to get the next page', () => {
    const text = topicsTable(
      [
        { topic_id: 'b2b_7', name: 'Cloud Payroll', category: 'HR' },
        { topic_id: 'b2b_12345', name: 'Payroll Software', category: 'Finance' },
      ],
      'next1',
    );
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^TOPIC ID\s+CATEGORY\s+NAME$/);
    expect(lines[2]).toBe('b2b_7      HR        Cloud Payroll');
    expect(lines[3]).toBe('b2b_12345  Finance   Payroll Software');
    expect(text).toContain('2 topics');
    expect(text).toContain('--cursor next1');
    expect(topicsTable([], null)).toBe('no topic matches');
  });

  it('shows each type with its counts and shortens long subtype lists', () => {
    const text = signalTypesTable([
      { signal_type: 'news', category: 'news', subtypes: ['companyNews', 'acquires'], signal_count: 12 },
      { signal_type: 'website-intelligence', subtypes: Array.from({ length: 38 }, (_, i) => `s${i}`) },
    ]);
    expect(text).toMatch(/^SIGNAL TYPE\s+CATEGORY\s+SIGNALS\s+SUBTYPES$/m);
    expect(text).toMatch(/^news\s+news\s+12\s+companyNews, acquires$/m);
    expect(text).toMatch(/s0, s1, s2, s3, s4, s5, … \(38\)$/m);
  });
});

describe('the command', () => {
  const answer: CatalogAnswer = { what: 'topics', topics: [{ topic_id: 'b2b_1', name: 'CRM' }], next_cursor: null };

  it('prints JSON with --json and a table without', async () => {
    const out: string[] = [];
    const call = async (_r: CatalogRequest) => answer;
    expect(
      await runCatalogCommand('topics search', () => topicsRequest('crm', {}), true, {
        call,
        print: (t) => out.push(t),
      }),
    ).toBe(0);
    expect(JSON.parse(out[0]!)).toEqual(answer);
    await runCatalogCommand('topics search', () => topicsRequest('crm', {}), false, {
      call,
      print: (t) => out.push(t),
    });
    expect(out[1]).toMatch(/^TOPIC ID/);
  });

  it('exits 2 naming the argument the service refused', async () => {
    const errors: string[] = [];
    const call = async () => {
      throw new ValidationError({ status: 422, code: 'validation_error', message: 'too long', field: 'q' });
    };
    const code = await runCatalogCommand('topics search', () => topicsRequest('x', {}), false, {
      call,
      print: () => {},
      printError: (t) => errors.push(t),
    });
    expect(code).toBe(2);
    expect(errors[0]).toBe('signal-kit topics search: TEXT: too long');
  });
});
