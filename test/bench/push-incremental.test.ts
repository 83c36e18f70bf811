/** Smoke size of bench/push-incremental.ts: full bulk calls on both runs, every new signal once, credits as priced. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/push-incremental.ts';
import { runSmoke } from './helpers.ts';

interface Metrics {
  domains: number;
  ideal: number;
  runs: { calls: number; ideal: number; newSignals: number; written: number; credits: number }[];
}

describe('bench push-incremental (smoke)', () => {
  it('pushes every new signal once in ceil(domains / 100) calls per run', async () => {
    const { metrics: m } = await runSmoke<Metrics>(run, 'push-incremental');
    expect(m.domains).toBe(SIZES.smoke.domains);
    expect(m.runs).toHaveLength(2);
    for (const r of m.runs) {
      expect(r.calls).toBeLessThanOrEqual(r.ideal + 1);
      expect(r.written).toBe(r.newSignals);
      expect(r.credits).toBe(2 * r.newSignals);
    }
    // The second run has new signals to push (the clock moved), so its calls are real work, not empty answers.
    expect(m.runs[1]!.newSignals).toBeGreaterThan(0);
  }, 240_000);
});
