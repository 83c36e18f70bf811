/** The arithmetic of the kit's API rate limiter: evenly spaced slots, never more than the budget in a minute. */
import { describe, expect, it } from 'vitest';
import {
  grantSlots,
  MAX_AHEAD_MS,
  MAX_LEAD_MS,
  type Schedule,
  type SlotGrant,
  slotIntervalMs,
} from '../../../workflows/rate-limiter-schedule.ts';

/** The most slots in any window of `windowMs` (a window (t - windowMs, t], like the service's). */
function busiest(slots: number[], windowMs: number): number {
  const sorted = [...slots].sort((a, b) => a - b);
  let most = 0;
  let head = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[head]! <= sorted[i]! - windowMs) head++;
    most = Math.max(most, i - head + 1);
  }
  return most;
}

/** A deterministic pseudo-random sequence (the test must not depend on the run). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('grantSlots', () => {
  it('grants one slot per interval and at most the budget in any minute, however the requests arrive', () => {
    for (const perMinute of [300, 60, 1000]) {
      const next = random(perMinute);
      const schedule: Schedule = { nextAt: 0 };
      const slots: number[] = [];
      const waits: number[] = [];
      let now = 1_000_000;
      let asked = 0;
      // Bursts from many processes, then quiet spells: 2,000 requests of 1 to 20 slots.
      for (let i = 0; i < 2_000; i++) {
        now += next() < 0.9 ? Math.floor(next() * 100) : Math.floor(next() * 120_000);
        const count = 1 + Math.floor(next() * 20);
        asked += count;
        const grant = grantSlots(schedule, now, count, perMinute);
        for (const wait of grant.waitsMs) {
          waits.push(wait);
          slots.push(now + wait);
        }
        // What is not granted is asked again later, as the permit client does.
        let rest = count - grant.waitsMs.length;
        let later: SlotGrant = grant;
        while (rest > 0) {
          expect(later.retryInMs).toBeGreaterThan(0);
          now += later.retryInMs!;
          later = grantSlots(schedule, now, rest, perMinute);
          for (const wait of later.waitsMs) {
            waits.push(wait);
            slots.push(now + wait);
          }
          rest -= later.waitsMs.length;
        }
      }
      expect(slots).toHaveLength(asked);
      expect(new Set(slots).size).toBe(asked);
      expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...waits)).toBeLessThanOrEqual(MAX_AHEAD_MS);
      const sorted = [...slots].sort((a, b) => a - b);
      let closest = Number.POSITIVE_INFINITY;
      for (let i = 1; i < sorted.length; i++) closest = Math.min(closest, sorted[i]! - sorted[i - 1]!);
      expect(closest).toBeGreaterThanOrEqual(slotIntervalMs(perMinute) - 1e-6);
      expect(busiest(slots, 60_000)).toBeLessThanOrEqual(perMinute);
    }
  });

  it('keeps a guard: a call sent late and held on its way still leaves the next minute of calls within the budget', () => {
    // Call 1 leaves 100 ms after its slot and takes 0.4 s longer to reach the service than call 301, which leaves
    // on time: they are still a minute apart when counted.
    expect(300 * slotIntervalMs(300) - 100 - 400).toBeGreaterThanOrEqual(60_000);
    const schedule: Schedule = { nextAt: 0 };
    const grant = grantSlots(schedule, 0, 5, 300);
    expect(grant.waitsMs.map((w) => Math.round(w))).toEqual([0, 202, 403, 605, 807]);
  });

  it('stops at the horizon and says when to come back for the rest', () => {
    const schedule: Schedule = { nextAt: 0 };
    const perMinute = 60; // 1,008 ms apart: 30 s of horizon holds 29 slots after the first
    const grant = grantSlots(schedule, 0, 100, perMinute);
    expect(grant.waitsMs).toHaveLength(Math.floor(MAX_AHEAD_MS / slotIntervalMs(perMinute)) + 1);
    expect(grant.retryInMs).toBeGreaterThan(0);
    const again = grantSlots(schedule, grant.retryInMs!, 1, perMinute);
    expect(again.waitsMs).toHaveLength(1);
    expect(again.retryInMs).toBeUndefined();
  });

  it('does not bank unused time: after a quiet spell the next slot is now, not a burst', () => {
    const schedule: Schedule = { nextAt: 0 };
    grantSlots(schedule, 0, 3, 300);
    const after = grantSlots(schedule, 600_000, 3, 300);
    expect(after.waitsMs.map((w) => Math.round(w))).toEqual([0, 202, 403]);
  });

  it('puts the first slot after a quiet spell off by the lead, so that it reaches the caller in time; a busy schedule does not move', () => {
    const schedule: Schedule = { nextAt: 0 };
    const dry = grantSlots(schedule, 600_000, 2, 300, undefined, 120);
    expect(dry.waitsMs.map((w) => Math.round(w))).toEqual([120, 322]);
    const busy = grantSlots(schedule, 600_000, 1, 300, undefined, 120);
    expect(busy.waitsMs.map((w) => Math.round(w))).toEqual([523]);
    // A lead beyond the limit counts as the limit: no caller can park the schedule.
    const capped = grantSlots({ nextAt: 0 }, 0, 1, 300, undefined, 60_000);
    expect(capped.waitsMs).toEqual([MAX_LEAD_MS]);
  });
});
