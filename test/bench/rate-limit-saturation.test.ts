/** Smoke size of bench/rate-limit-saturation.ts: two workers, a small window, every call counted by the proxy. */
import { describe, expect, it } from 'vitest';
import { CONFIGURATIONS, run, SIZES } from '../../bench/rate-limit-saturation.ts';
import { runSmoke } from './helpers.ts';

interface Metrics {
  batches: number;
  perMinute: number;
  outcomes: {
    name: string;
    accepted: number;
    singleCalls: number;
    rateLimited: number;
    wallMs: number;
    share: number;
    achievedPerMin: number;
    busiestWindow: number;
    busiestWindowAtService: number;
  }[];
}

describe('bench rate-limit-saturation (smoke)', () => {
  it('makes one accepted call per batch or contact, no 429 and never exceeds the window, in every case', async () => {
    const { result, metrics: m } = await runSmoke<Metrics>(run, 'rate-limit-saturation');
    expect(m.batches).toBe(Math.ceil(SIZES.smoke.domains / 100));
    expect(m.outcomes.map((o) => o.name)).toEqual(CONFIGURATIONS.map((c) => c.name));
    expect(result.table.columns).toHaveLength(1 + CONFIGURATIONS.length);
    for (const o of m.outcomes) {
      expect(o.accepted).toBe(m.batches);
      expect(o.rateLimited).toBe(0);
      expect(o.busiestWindow).toBeLessThanOrEqual(SIZES.smoke.rateLimit);
      expect(o.busiestWindowAtService).toBeLessThanOrEqual(SIZES.smoke.rateLimit);
      expect(o.achievedPerMin).toBeCloseTo((o.accepted / o.wallMs) * 60_000, 9);
      expect(o.share).toBeCloseTo(o.achievedPerMin / m.perMinute, 9);
    }
    // The single-call cases: every call of the contacts job alone; half of them beside a bulk job.
    const single = (name: string) => m.outcomes.find((o) => o.name === name)!.singleCalls;
    expect(single('single-calls')).toBe(m.batches);
    expect(single('single-and-bulk')).toBe(m.batches / 2);
    expect(single('partitions-4')).toBe(0);
  }, 300_000);
});
