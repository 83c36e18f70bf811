/**
 * The arithmetic of the kit's API rate limiter (workflows/rate-limiter.ts), kept pure so that it can be tested
 * without Temporal. Calls are spaced evenly: a budget of N per window grants one slot every (window + guard) / N.
 * Even spacing satisfies a sliding window of any length as well as a token bucket.
 *
 * Why the guard is what it is. The service counts a call when it arrives, the kit only decides when it leaves. Two
 * calls N slots apart (N = the budget per window) have slots window + guard apart; each leaves at most
 * SEND_LATENESS_MS after its slot (workers/rate-limiter-permits.ts gives a later slot up), never before it, so they leave at
 * least window + ARRIVAL_SPREAD_MS apart. They can only meet in one window at the service if the first took
 * ARRIVAL_SPREAD_MS longer to get there than the second: a network hiccup, or a service, proxy or gateway whose
 * event loop stalls while the later one passes. With the slots on the limiter's clock, this holds whatever each
 * grant's round trip (processes on hosts whose clocks agree; a skew between hosts counts as spread).
 */

/** A call leaves at most this long after its slot; a slot reaching its caller later is given up. */
export const SEND_LATENESS_MS = 100;

/**
 * How much longer one call may take to reach the service than a call a window later, and the window still hold.
 * The saturation benchmark's own proxy, in a process that also answers 5 bulk calls a second, held calls up to
 * 0.42 s on a loaded machine, and 0.2 s (a 0.3 s guard) let 301 calls into one window in a full run.
 */
export const ARRIVAL_SPREAD_MS = 400;

/** Time per window of budget left unused so that calls leaving late or arriving unevenly never make N + 1. */
export const ARRIVAL_GUARD_MS = SEND_LATENESS_MS + ARRIVAL_SPREAD_MS;

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
 * sliding window of `windowMs` (a minute unless the service says otherwise). The guard is per window (see above).
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
 * would reach it already late, and a slot that late is given up (workers/rate-limiter-permits.ts): the lead puts it where the
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
