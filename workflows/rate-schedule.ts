/**
 * The arithmetic of the kit's API rate limiter (workflows/api-rate-limiter.ts), kept pure so that it can be tested
 * without Temporal. Calls are spaced evenly: a budget of N per minute grants one slot every (60 s + guard) / N. Even
 * spacing satisfies a sliding window of any length as well as a token bucket; the guard absorbs the jitter between
 * the moment a slot is granted and the moment the call reaches the service (a worker's event loop, a GC pause).
 */

/** Time per minute of budget left unused so that late-arriving calls never make 301 in a 60 s window. */
export const ARRIVAL_GUARD_MS = 300;

/** How far ahead slots are granted; a caller asking beyond it is told to come back (activities stay short). */
export const MAX_AHEAD_MS = 30_000;

/**
 * A budget above this many requests per minute (1,000 a second, more than a worker sends) is not paced at all: each
 * slot would cost a Temporal round trip for no purpose. Benchmarks set such a budget to take the limit out of the way.
 */
export const UNPACED_ABOVE_PER_MINUTE = 60_000;

/** Slots one request may ask for (one per waiting API call of a worker process). */
export const MAX_SLOTS_PER_REQUEST = 256;

/**
 * Milliseconds between two calls for a budget of `perMinute` requests per minute, enforced by the service over a
 * sliding window of `windowMs` (a minute unless the service says otherwise). The guard is per window: a call that
 * reaches the service up to ARRIVAL_GUARD_MS later than its slot still leaves every window within the budget.
 */
export function slotIntervalMs(perMinute: number, windowMs = 60_000): number {
  return (windowMs + ARRIVAL_GUARD_MS) / ((perMinute * windowMs) / 60_000);
}

export interface SlotGrant {
  /** One wait per granted slot, from `now`, in the order they were granted. */
  waitsMs: number[];
  /**
   * The limiter's `now` (epoch ms): a caller waits until `grantedAt + wait`, not `wait` from when the answer reached
   * it, so that the answer's varying round trip does not move its slots closer to another process's.
   */
  grantedAt?: number;
  /** When fewer slots than asked were granted: come back after this long for the rest. */
  retryInMs?: number;
}

export interface Schedule {
  /** The earliest time (ms) the next slot may be granted for. */
  nextAt: number;
}

/** The most a caller may ask its first slot to be put off (see grantSlots' `leadMs`). */
export const MAX_LEAD_MS = 1_000;

/**
 * Grants up to `count` slots at `now`: each at the later of `now + leadMs` and the previous slot plus the interval,
 * none beyond `now + MAX_AHEAD_MS`. Mutates `schedule`.
 *
 * `leadMs` is about how long the grant takes to reach the caller. When the schedule has run dry, a slot at `now`
 * would reach it already late, and a slot that late is given up (workers/api-permits.ts): the lead puts it where the
 * caller can still use it.
 */
export function grantSlots(
  schedule: Schedule,
  now: number,
  count: number,
  perMinute: number,
  windowMs?: number,
  leadMs = 0,
): SlotGrant {
  const interval = slotIntervalMs(perMinute, windowMs);
  const earliest = now + Math.min(Math.max(leadMs, 0), MAX_LEAD_MS);
  const waitsMs: number[] = [];
  for (let i = 0; i < count; i++) {
    const at = Math.max(earliest, schedule.nextAt);
    if (at - now > MAX_AHEAD_MS) break;
    waitsMs.push(at - now);
    schedule.nextAt = at + interval;
  }
  if (waitsMs.length === count) return { waitsMs, grantedAt: now };
  return { waitsMs, grantedAt: now, retryInMs: Math.max(1, Math.ceil(schedule.nextAt - now - MAX_AHEAD_MS)) };
}
