/** Smoke size of bench/crm-write-back.ts: every record written and read back equal, API calls at the minimum. */
import { describe, expect, it } from 'vitest';
import { type HalfRun, run, SIZES } from '../../bench/crm-write-back.ts';
import { runSmoke } from './helpers.ts';

describe('bench crm-write-back (smoke)', () => {
  it('writes every record into the HubSpot stand-in in ceil(n / 100) calls, plus one per 429 it was given', async () => {
    const { metrics } = await runSmoke<{ runs: HalfRun[] }>(run, 'crm-write-back');
    const hubspot = metrics.runs.filter((r) => r.crm === 'hubspot');
    expect(hubspot).toHaveLength(2);
    for (const r of hubspot) {
      expect(r.written).toBe(SIZES.smoke.records);
      expect(r.calls).toBe(Math.ceil(SIZES.smoke.records / 100) + r.refusedByFault);
    }
    expect(hubspot[1]?.pauses).toBeGreaterThan(0);
  }, 120_000);
});
