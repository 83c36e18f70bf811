/** Smoke size of bench/webhook-intake.ts: every event the intake accepted reaches the destination. */
import { describe, expect, it } from 'vitest';
import { run, SIZES } from '../../bench/webhook-intake.ts';
import { expectWellFormed } from './helpers.ts';

describe('bench webhook-intake (smoke)', () => {
  it('delivers exactly the accepted events and measures the baseline in the same run', async () => {
    const result = await run('smoke', { log: () => {} });
    expectWellFormed(result, 'webhook-intake');
    const m = result.metrics as {
      baseline: { started: number; ratePerS: number };
      steps: {
        sent: number;
        accepted: number;
        rejected: number;
        failed: number;
        skipped: number;
        p99Ms: number;
        bareStarts: { sent: number; accepted: number; rejected: number; failed: number; p99Ms: number };
        p99Ratio: number;
      }[];
      alone: { sent: number; accepted: number; rejected: number; failed: number };
      accepted: number;
      delivered: number;
      strays: number;
    };
    expect(m.steps).toHaveLength(SIZES.smoke.steps.length);
    for (const step of m.steps) {
      expect(step.accepted + step.rejected + step.failed).toBe(step.sent);
      // The bare-start baseline of the step ran at the same rate, and every start was answered.
      expect(step.bareStarts.accepted + step.bareStarts.rejected + step.bareStarts.failed).toBe(step.bareStarts.sent);
      expect(step.bareStarts.accepted).toBeGreaterThan(0);
      expect(step.p99Ratio).toBe(step.p99Ms / step.bareStarts.p99Ms);
    }
    // The intake alone (its capacity run) answered every event it was sent, and counts among the accepted.
    expect(m.alone.accepted + m.alone.rejected + m.alone.failed).toBe(m.alone.sent);
    expect(m.steps.reduce((sum, s) => sum + s.accepted, 0) + m.alone.accepted).toBe(m.accepted);
    expect(m.delivered).toBe(m.accepted);
    expect(m.strays).toBe(0);
  }, 240_000);
});
