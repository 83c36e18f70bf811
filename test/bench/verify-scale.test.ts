/** Smoke size of bench/verify-scale.ts: duplicates removed, summary equal to the recount, the chain followed. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/verify-scale.ts';
import { runSmoke } from './helpers.ts';

interface Metrics {
  addresses: number;
  distinct: number;
  runs: { events: number }[];
  maxEvents: number;
  summary: { total: number; deliverable: number; undeliverable: number; risky: number; unknown: number };
  recounted: { lines: number; errors: number; summary: unknown };
  creditsManifest: number;
  creditsLedger: number;
}

describe('bench verify-scale (smoke)', () => {
  it('verifies every distinct address once and the summary adds up', async () => {
    const { metrics: m } = await runSmoke<Metrics>(run, 'verify-scale');
    expect(m.addresses).toBe(SIZES.smoke.addresses);
    expect(m.distinct).toBe(Math.round(SIZES.smoke.addresses * (1 - SIZES.smoke.duplicateShare)));
    // batchesPerRun 4 over 10 chunks: the job continued as new at least twice.
    expect(m.runs.length).toBeGreaterThanOrEqual(3);
    expect(m.maxEvents).toBe(Math.max(...m.runs.map((r) => r.events)));
    expect(m.recounted.summary).toEqual(m.summary);
    expect(m.recounted.lines).toBe(m.distinct);
    expect(m.creditsManifest).toBe(m.creditsLedger);
  }, 240_000);
});
