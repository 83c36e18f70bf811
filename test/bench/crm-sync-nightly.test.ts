/** Smoke size of bench/crm-sync-nightly.ts: night 2 pays the ideal in ceil(companies / 100) calls, far under a full re-enrichment. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/crm-sync-nightly.ts';
import { runSmoke } from './helpers.ts';

type Night = { calls: number; idealCalls: number; credits: number; idealCredits: number; fullCredits: number };

describe('bench crm-sync-nightly (smoke)', () => {
  it('pays night 2 only for what is new, in full calls', async () => {
    const { metrics } = await runSmoke<{ sizes: number[]; nights: Night[] }>(run, 'crm-sync-nightly');
    const [first, second] = metrics.nights;
    expect(metrics.sizes).toEqual(SIZES.smoke.accounts);
    expect(first!.credits).toBe(first!.idealCredits);
    expect(second!.credits).toBe(second!.idealCredits);
    expect(second!.calls).toBe(second!.idealCalls);
    // Something was new on night 2 (the calls did real work), and still far less than a full re-enrichment.
    expect(second!.credits).toBeGreaterThan(0);
    expect(second!.credits * 5).toBeLessThan(second!.fullCredits);
  }, 240_000);
});
