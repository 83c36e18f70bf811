/** Smoke size of bench/enrich-throughput.ts: it runs end to end and its numbers agree with each other. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/enrich-throughput.ts';
import { expectWellFormed } from './helpers.ts';

describe('bench enrich-throughput (smoke)', () => {
  it('runs every side over the same input and every domain comes out once on each', async () => {
    const result = await run('smoke', { log: () => {} });
    expectWellFormed(result, 'enrich-throughput');
    const { domains } = SIZES.smoke;
    const metrics = result.metrics as {
      rounds: { a: { lines: number; rate: number }; b: { lines: number; rate: number }; a0: { lines: number } }[];
      twoWorkers: { lines: number };
      ratio: number;
    };
    expect(metrics.rounds).toHaveLength(SIZES.smoke.rounds);
    for (const { a, b, a0 } of metrics.rounds) {
      expect(a.lines).toBe(domains);
      expect(b.lines).toBe(domains);
      expect(a0.lines).toBe(domains);
    }
    expect(metrics.twoWorkers.lines).toBe(domains);
    expect(metrics.ratio).toBeCloseTo(metrics.rounds[0]!.a.rate / metrics.rounds[0]!.b.rate, 6);
  }, 240_000);
});
