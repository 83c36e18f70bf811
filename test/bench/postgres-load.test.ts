/** Smoke size of bench/postgres-load.ts: both sides copy every signal, the reload merges, and the tables agree. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/postgres-load.ts';
import { runSmoke } from './helpers.ts';

describe('bench postgres-load (smoke)', () => {
  it('loads every signal on both sides, into tables that agree', async () => {
    const { metrics } = await runSmoke<{ signals: number; kit: unknown[]; baseline: unknown[] }>(run, 'postgres-load');
    expect(metrics.signals).toBe(SIZES.smoke.signals);
    expect(metrics.kit).toHaveLength(SIZES.smoke.rounds);
    expect(metrics.baseline).toHaveLength(SIZES.smoke.rounds);
  }, 120_000);
});
