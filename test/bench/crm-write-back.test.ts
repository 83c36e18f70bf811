/** Smoke size of bench/crm-write-back.ts: every record written and read back equal, API calls at the minimum. */
import { beforeAll, describe, expect, it } from 'vitest';
import { type HalfRun, run, SIZES } from '../../bench/crm-write-back.ts';
import { INGEST_JOB_MINIMUM_CALLS, type SalesforceRun } from '../../bench/lib/salesforce-write-back.ts';
import { runSmoke } from './helpers.ts';

describe('bench crm-write-back (smoke)', () => {
  let runs: (HalfRun | SalesforceRun)[];
  beforeAll(async () => {
    runs = (await runSmoke<{ runs: (HalfRun | SalesforceRun)[] }>(run, 'crm-write-back')).metrics.runs;
  }, 120_000);

  it('writes every record into the HubSpot stand-in in ceil(n / 100) calls, plus one per 429 it was given', () => {
    const hubspot = runs.filter((r) => r.crm === 'hubspot');
    expect(hubspot).toHaveLength(2);
    for (const r of hubspot) {
      expect(r.written).toBe(SIZES.smoke.records);
      expect(r.calls).toBe(Math.ceil(SIZES.smoke.records / 100) + r.refusedByFault);
    }
    expect(hubspot[1]?.pauses).toBeGreaterThan(0);
  });

  it('writes every record into the Salesforce stand-in through one ingest job of seven calls, and through Collections', () => {
    const [bulk, collections] = runs.filter((r): r is SalesforceRun => r.crm === 'salesforce');
    // The minimum, plus each look at the job's state that found the stand-in still processing it (its own count).
    expect(bulk).toMatchObject({
      written: SIZES.smoke.records,
      ingestJobs: 1,
      calls: INGEST_JOB_MINIMUM_CALLS + (bulk?.checksWhileProcessing ?? Number.NaN),
    });
    expect(collections).toMatchObject({
      written: SIZES.smoke.records,
      ingestJobs: 0,
      calls: Math.ceil(SIZES.smoke.records / 200),
      valuesEqual: true,
    });
    expect(bulk?.valuesEqual).toBe(true);
  });
});
