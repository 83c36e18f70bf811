/** Smoke size of bench/export-streaming.ts: both sides store the whole download; the worker is measured per size. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/export-streaming.ts';
import { expectWellFormed } from './helpers.ts';

describe('bench export-streaming (smoke)', () => {
  it('stores every byte on both sides at each size', async () => {
    const result = await run('smoke', { log: () => {} });
    expectWellFormed(result, 'export-streaming');
    const sizes = (
      result.metrics as {
        sizes: {
          target: number;
          bytes: number;
          kit: { bytes: number }[];
          baseline: { bytes: number }[];
          kitPeakKb: number;
        }[];
      }
    ).sizes;
    expect(sizes.map((s) => s.target)).toEqual([...SIZES.smoke.sizes]);
    for (const size of sizes) {
      expect(size.bytes % 768).toBe(0);
      expect(size.bytes).toBeGreaterThanOrEqual(size.target);
      expect(size.kit).toHaveLength(SIZES.smoke.rounds);
      expect(size.baseline).toHaveLength(SIZES.smoke.rounds);
      for (const r of [...size.kit, ...size.baseline]) expect(r.bytes).toBe(size.bytes);
    }
  }, 240_000);
});
