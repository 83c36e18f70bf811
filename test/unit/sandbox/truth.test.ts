import { describe, expect, it } from 'vitest';
import { call, charged, knownDomains, movableClock, startStoppedAfterEach, T0 } from './helpers.ts';

const start = startStoppedAfterEach();

describe('the sandbox as an oracle', () => {
  it('companySignals lists what bulk enrich returns without a limit, filters and window applied', async () => {
    const sb = await start();
    const domains = await knownDomains(sb, 5, 3);
    const inputs = [...domains, 'WWW.' + domains[0]!.toUpperCase(), 'nowhere.example', 'bad..domain'];
    const after = '2025-06-01T00:00:00Z';
    const truth = sb.truth.companySignals(inputs, { detected_after: after });
    const r = await call(sb, 'POST', '/v1/companies/enrich/bulk', { domains, detected_after: after, limit: 500 });
    for (const [i, result] of r.json.results.entries()) {
      expect(truth[i]!.status).toBe('ok');
      expect(truth[i]!.signals.map((s) => s.signal_id)).toEqual(
        result.signals.map((s: { signal_id: string }) => s.signal_id),
      );
    }
    expect(truth[5]!.domain).toBe(domains[0]);
    expect(truth[5]!.signals).toEqual(truth[0]!.signals);
    expect(truth.slice(6).map((t) => t.status)).toEqual(['not_found', 'invalid']);

    const before = '2025-09-01T00:00:00Z';
    const types = ['news'];
    const narrowed = sb.truth.companySignals(domains, {
      detected_after: after,
      detected_before: before,
      signal_types: types,
    });
    for (const [i, t] of narrowed.entries()) {
      const expected = truth[i]!.signals.filter((s) => s.signal_type === 'news' && s.detected_at < before);
      expect(t.signals).toEqual(expected);
    }
  });

  it('companySignals sees what the clock reveals, like enrich does', async () => {
    const clock = movableClock();
    const sb = await start({ clock });
    const [domain] = await knownDomains(sb, 1, 20);
    const now = sb.truth.companySignals([domain!])[0]!.signals.length;
    clock.advance(365 * 86_400_000);
    const later = sb.truth.companySignals([domain!])[0]!.signals.length;
    expect(later).toBeGreaterThan(now);
    expect(sb.truth.companySignals([domain!], { at: T0 })[0]!.signals.length).toBe(now);
  });

  it('records every call: what it asked, what it returned, its status, credits and fault', async () => {
    const sb = await start({ faults: { errorRate: 0 } });
    const mark = sb.truth.lastCall();
    const domains = await knownDomains(sb, 2, 1);
    const calls0 = sb.truth.calls({ after: mark });
    const r = await call(sb, 'POST', '/v1/companies/enrich/bulk', {
      domains: [...domains, 'nowhere.example'],
      limit: 2,
    });
    const [rec] = sb.truth.calls({ after: calls0.at(-1)!.seq, path: '/v1/companies/enrich/bulk' });
    expect(rec).toMatchObject({
      method: 'POST',
      status: 200,
      account: 'acct_default',
      credits: charged(r),
      fault: null,
      asked: { domains: [...domains, 'nowhere.example'], limit: 2 },
      returned: { ok: 2, not_found: 1, signals: r.json.summary.signals },
    });
    expect(rec!.credits).toBe(2 * r.json.summary.signals);
    const unauth = await call(sb, 'GET', '/v1/stats', undefined, { key: null });
    expect(unauth.status).toBe(401);
    expect(sb.truth.calls().at(-1)).toMatchObject({ path: '/v1/stats', status: 401, account: undefined, credits: 0 });
  });

  it('verification truth gives each address its price; upstream failures show in the call record', async () => {
    const sb = await start({ faults: { verifyUpstreamFailureRate: 0.5 } });
    const emails = Array.from({ length: 40 }, (_, i) => `person${i}@acme-robotics.com`);
    const truth = sb.truth.emailVerifications([...emails, 'unknown1@acme-robotics.com', 'not-an-email']);
    expect(truth.at(-2)).toMatchObject({ valid: true, result: 'unknown', credits: 0 });
    expect(truth.at(-1)).toMatchObject({ valid: false, credits: 0 });
    const r = await call(sb, 'POST', '/v1/emails/verify/bulk', { emails });
    const rec = sb.truth.calls({ path: '/v1/emails/verify/bulk' }).at(-1)!;
    const failed = rec.returned!['upstream_failures'] as string[];
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.sort()).toEqual(
      r.json.errors
        .filter((e: { code: string }) => e.code === 'upstream_failure')
        .map((e: { email: string }) => e.email)
        .sort(),
    );
    const paid = truth.filter((t) => !failed.includes(t.email) && emails.includes(t.input));
    expect(charged(r)).toBe(paid.reduce((sum, t) => sum + t.credits, 0));
  });

  it('an export with no rows is free (spec 7); one with rows costs the flat rate per topic', async () => {
    const sb = await start();
    const empty = {
      topic_ids: ['b2b_7'],
      has_email: true,
      has_mobile: true,
      seniority: ['Cxo'],
      department: ['Nowhere'],
    };
    expect(sb.truth.intentExport(empty)).toEqual({ rowCount: 0, credits: 0 });
    const r0 = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', empty);
    expect(r0.status).toBe(202);
    expect(charged(r0)).toBe(0);
    const full = { topic_ids: ['b2b_7', 'b2b_8', 'b2b_7'] };
    const quote = sb.truth.intentExport(full);
    expect(quote.credits).toBe(50);
    const r1 = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', full);
    expect(charged(r1)).toBe(50);
    expect(sb.truth.calls({ path: '/v1/buyer-intent/contacts/export' }).at(-1)).toMatchObject({
      credits: 50,
      returned: { export_id: r1.json.export_id, row_count: quote.rowCount },
    });
    expect(sb.ledger.total()).toBe(50);
  });

  it('a lost answer does the work and charges, then answers 5xx (with x-credits-charged) or resets', async () => {
    const sb = await start({
      faults: {
        lostAnswerRate: 1,
        lostAnswerAs: '5xx',
        lostAnswerPaths: ['/v1/buyer-intent/contacts/export'],
        lostAnswerMax: 1,
      },
    });
    const body = { topic_ids: ['b2b_9'] };
    const lost = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', body);
    expect([500, 502, 503]).toContain(lost.status);
    expect(charged(lost)).toBe(25);
    expect(sb.ledger.total()).toBe(25);
    const again = await call(sb, 'POST', '/v1/buyer-intent/contacts/export', body);
    expect(again.status).toBe(202);
    expect(sb.ledger.total()).toBe(50);
    const recs = sb.truth.calls({ path: '/v1/buyer-intent/contacts/export' });
    expect(recs.map((c) => [c.fault, c.credits])).toEqual([
      ['lost_answer_5xx', 25],
      [null, 25],
    ]);
    // The lost submit created an export too: the service did the work.
    expect(recs[0]!.returned!['export_id']).not.toBe(again.json.export_id);

    sb.setFaults({ lostAnswerRate: 1, lostAnswerAs: 'reset' });
    await expect(call(sb, 'POST', '/v1/emails/verify', { email: 'jane@acme-robotics.com' })).rejects.toThrow();
    await expect.poll(() => sb!.truth.calls({ path: '/v1/emails/verify' }).length).toBe(1);
    expect(sb.truth.calls({ path: '/v1/emails/verify' })[0]).toMatchObject({
      status: null,
      fault: 'lost_answer_reset',
    });
    const [jane] = sb.truth.emailVerifications(['jane@acme-robotics.com']);
    expect(sb.ledger.total()).toBe(50 + jane!.credits);
  });
});
