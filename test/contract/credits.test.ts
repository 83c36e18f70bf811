/**
 * Credits: over a scripted sequence of calls, the credits reported to the client equal the sandbox ledger, rule
 * by rule (spec section 8), and every charge in the ledger belongs to a call the client saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseMeta } from '../../connectors/signal-api/index.ts';
import {
  ACCOUNT,
  client,
  findDomains,
  KEY_2,
  movableClock,
  type Sandbox,
  sandbox,
  T0,
  type TestClient,
} from './helpers.ts';

let sb: Sandbox;
let c: TestClient;
let known: string[];
let unknown: string[];
const seen: ResponseMeta[] = [];

function track<T extends ResponseMeta>(r: T): T {
  seen.push(r);
  return r;
}

/** Runs `fn` and returns the ledger's growth meanwhile. */
async function ledgerDelta(fn: () => Promise<unknown>): Promise<number> {
  const before = sb.ledger.total(ACCOUNT);
  await fn();
  return sb.ledger.total(ACCOUNT) - before;
}

beforeAll(async () => {
  sb = await sandbox({ clock: movableClock(T0) });
  c = client(sb, { retry: false });
  const f = await findDomains(c);
  known = f.known;
  unknown = f.unknown;
  seen.push({ credits: f.credits });
});

afterAll(async () => {
  await c?.close();
  await sb?.stop();
});

describe('credit rules', () => {
  it('company enrich: 2 per signal returned', async () => {
    let credits = 0;
    const delta = await ledgerDelta(async () => {
      for (const domain of known.slice(0, 5)) {
        const r = track(await c.enrichCompany({ domain, limit: 7 }));
        expect(r.credits).toBe(2 * r.signals.length);
        credits += r.credits;
      }
    });
    expect(credits).toBeGreaterThan(0);
    expect(delta).toBe(credits);
  });

  it('company enrich: zero-result and not-found calls are free', async () => {
    const delta = await ledgerDelta(async () => {
      const empty = track(await c.enrichCompany({ domain: known[0]!, detected_after: new Date(T0 + 86_400_000) }));
      expect(empty.signals).toHaveLength(0);
      expect(empty.credits).toBe(0);
      await expect(c.enrichCompany({ domain: unknown[0]! })).rejects.toMatchObject({ name: 'NotFoundError' });
      const legacyMissing = await c.enrichCompanyLegacy({ domain: unknown[0]! }).catch((e: Error) => e);
      expect(legacyMissing).toBeInstanceOf(Error);
    });
    expect(delta).toBe(0);
  });

  it('bulk enrich: 2 per signal across the batch; not-found domains free', async () => {
    const delta = await ledgerDelta(async () => {
      const r = track(await c.enrichCompanies({ domains: [...known.slice(0, 10), ...unknown.slice(0, 3)], limit: 4 }));
      expect(r.credits).toBe(2 * r.summary.signals);
      expect(r.credits).toBe(seenLast().credits);
    });
    expect(delta).toBe(seenLast().credits);
  });

  it('legacy enrich: same price as the POST form', async () => {
    const delta = await ledgerDelta(async () => {
      const r = track(await c.enrichCompanyLegacy({ domain: known[6]! }));
      expect(r.credits).toBe(2 * r.signals.length);
    });
    expect(delta).toBe(seenLast().credits);
  });

  it('lookups by id, the types list, stats and the topic catalog are free', async () => {
    const delta = await ledgerDelta(async () => {
      const r = await c.enrichCompany({ domain: known[0]!, limit: 1 });
      track(r);
      const before = sb.ledger.total(ACCOUNT);
      for (const x of [
        await c.getSignal(r.signals[0]!.signal_id),
        await c.listSignalTypes(),
        await c.getStats(),
        await c.searchTopics({ q: 'cloud', limit: 10 }),
      ]) {
        expect(track(x).credits).toBe(0);
      }
      expect(sb.ledger.total(ACCOUNT)).toBe(before);
    });
    expect(delta).toBe(seenLast(5).credits);
  });

  it('email verify: 1 per address verified, unknown free, duplicates once, invalid free', async () => {
    const emails = [
      ...Array.from({ length: 120 }, (_, i) => `person${i}@firm-${i % 13}.com`),
      'dup@gmail.com',
      'DUP@gmail.com',
      'dup@gmail.com',
      'not-an-email',
    ];
    let expected = 0;
    const delta = await ledgerDelta(async () => {
      const r = track(await c.verifyEmails({ emails }));
      const charged = r.verifications.filter((v) => v.result !== 'unknown').length;
      expect(r.verifications.some((v) => v.result === 'unknown')).toBe(true);
      expect(r.credits).toBe(charged);
      expect(r.summary.total).toBe(r.verifications.length);
      expect(r.summary.unknown).toBe(r.verifications.length - charged);
      expected += r.credits;
      const unknownOne = r.verifications.find((v) => v.result === 'unknown')!;
      const single = track(await c.verifyEmail({ email: unknownOne.email }));
      expect(single.result.result).toBe('unknown');
      expect(single.credits).toBe(0);
      const known1 = r.verifications.find((v) => v.result !== 'unknown')!;
      const paid = track(await c.verifyEmail({ email: known1.email }));
      expect(paid.credits).toBe(1);
      expected += 1;
    });
    expect(delta).toBe(expected);
  });

  it('buyer-intent contacts: 1 per contact returned; a page with none is free', async () => {
    let expected = 0;
    const delta = await ledgerDelta(async () => {
      for await (const page of c.iterateBuyerIntentContactPages({ topic_ids: ['b2b_7', 'b2b_8'], page_size: 40 })) {
        track(page);
        expect(page.credits).toBe(page.contacts.length);
        expected += page.credits;
      }
    });
    expect(delta).toBe(expected);
  });

  it('search: 1 per company or contact returned (sandbox README)', async () => {
    const delta = await ledgerDelta(async () => {
      const a = track(await c.searchCompanies({ limit: 5 }));
      expect(a.credits).toBe(a.companies.length);
      const b = track(await c.searchContacts({ limit: 5 }));
      expect(b.credits).toBe(b.contacts.length);
    });
    expect(delta).toBe(seenLast(2).credits);
  });

  it('contact enrich: 2 per person-level signal', async () => {
    const found = await c.searchContacts({ limit: 20 });
    track(found);
    const email = found.contacts.find((x) => x.contact.email)!.contact.email!;
    const delta = await ledgerDelta(async () => {
      const r = track(await c.enrichContact({ contact_email: email }));
      expect(r.credits).toBe(2 * r.contact_signals.length);
    });
    expect(delta).toBe(seenLast().credits);
  });

  it('intent export: flat 25 per topic at submit; polling free', async () => {
    const delta = await ledgerDelta(async () => {
      const job = track(await c.createIntentExport({ topic_ids: ['b2b_1', 'b2b_2', 'b2b_3'], limit: 10 }));
      expect(job.credits).toBe(75);
      expect(track(await c.getIntentExport(job.export_id)).credits).toBe(0);
    });
    expect(delta).toBe(75);
  });

  it('webhook management is free', async () => {
    const delta = await ledgerDelta(async () => {
      const wh = track(await c.createWebhook({ url: 'http://127.0.0.1:9/none', signal_types: ['news'] }));
      track(await c.updateWebhook(wh.webhook_id, { status: 'paused' }));
      track(await c.listWebhooks());
      track(await c.deleteWebhook(wh.webhook_id));
      expect(seen.slice(-4).every((x) => x.credits === 0)).toBe(true);
    });
    expect(delta).toBe(0);
  });

  it('both keys charge the one account', async () => {
    const second = client(sb, { apiKey: KEY_2, retry: false });
    const delta = await ledgerDelta(async () => {
      track(await second.enrichCompany({ domain: known[8]!, limit: 3 }));
    });
    expect(delta).toBe(seenLast().credits);
    await second.close();
  });

  it('over the whole sequence the client total equals the ledger, call by call', () => {
    const total = seen.reduce((n, x) => n + x.credits, 0);
    expect(total).toBe(sb.ledger.total(ACCOUNT));
    const byRequest = new Map(seen.filter((x) => x.requestId).map((x) => [x.requestId, x.credits]));
    const entries = sb.ledger.entries.filter((e: { account: string }) => e.account === ACCOUNT);
    for (const e of entries as { requestId: string; credits: number }[]) {
      if (byRequest.has(e.requestId)) expect(e.credits).toBe(byRequest.get(e.requestId));
    }
    expect(sb.ledger.balance(ACCOUNT)).toBe(1_000_000 - total);
    expect(seen.at(-1)?.creditsRemaining).toBe(sb.ledger.balance(ACCOUNT));
  });
});

/** The sum of the last `n` tracked results. */
function seenLast(n = 1): { credits: number } {
  return { credits: seen.slice(-n).reduce((s, x) => s + x.credits, 0) };
}

describe('running out', () => {
  it('402 when the balance cannot cover a call; nothing charged, nothing returned', async () => {
    const poor = await sandbox({ accounts: [{ id: 'acct_poor', keys: ['sk_poor'], credits: 3 }] });
    const pc = client(poor, { apiKey: 'sk_poor', retry: false });
    const f = await pc.enrichCompanies({ domains: ['firm-1.com'], limit: 1 }).catch((e: Error) => e);
    // 1 signal at most: 2 credits fit in 3
    if (!(f instanceof Error)) expect(poor.ledger.balance('acct_poor')).toBe(3 - f.credits);
    const before = poor.ledger.balance('acct_poor');
    const err = await pc
      .enrichCompanies({ domains: Array.from({ length: 20 }, (_, i) => `firm-${i}.com`), limit: 50 })
      .catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'InsufficientCreditsError', status: 402, code: 'insufficient_credits' });
    expect(poor.ledger.balance('acct_poor')).toBe(before);
    await pc.close();
    await poor.stop();
  });
});
