/** Smoke size of bench/parquet-cost.ts: every writer measured in every round, on the same lines. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/parquet-cost.ts';
import { runSmoke } from './helpers.ts';

describe('bench parquet-cost (smoke)', () => {
  it('measures Parquet, JSONL and CSV tables, the flattening and the lines part in every round', async () => {
    const { metrics } = await runSmoke<{
      lines: number;
      signals: number;
      toJsonlTables: number[];
      samples: Record<string, { cpuMs: number; bytes: number }[]>;
    }>(run, 'parquet-cost');
    expect(metrics.lines).toBe(SIZES.smoke.answers * 100);
    expect(metrics.signals).toBeGreaterThan(0);
    expect(metrics.toJsonlTables).toHaveLength(SIZES.smoke.rounds);
    expect(Object.keys(metrics.samples).sort()).toEqual([
      'csv',
      'flatten',
      'gzip jsonl (lines part)',
      'jsonl',
      'parquet',
    ]);
    for (const samples of Object.values(metrics.samples)) expect(samples).toHaveLength(SIZES.smoke.rounds);
  }, 120_000);
});
