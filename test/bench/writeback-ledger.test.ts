/** Smoke size of bench/writeback-ledger.ts: both forms round-trip a sample of records equal. */
import { describe, expect, it } from 'vitest';
import { type LedgerRun, run, SIZES } from '../../bench/writeback-ledger.ts';
import { runSmoke } from './helpers.ts';

describe('bench writeback-ledger (smoke)', () => {
  it('builds, publishes and reads back the ledger in both forms, every sampled record equal', async () => {
    const { metrics } = await runSmoke<{ runs: LedgerRun[] }>(run, 'writeback-ledger');
    expect(metrics.runs.map((r) => [r.form, r.records, r.equal])).toEqual([
      ['json', SIZES.smoke.records, true],
      ['database', SIZES.smoke.records, true],
    ]);
  }, 120_000);
});
