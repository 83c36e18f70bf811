/**
 * The account rate limit (spec 5.4, 8): at most `limit` accepted requests in any sliding window (60 s) per
 * account, shared by all of its keys. Rejected requests do not count. Uses a monotonic clock, not the sandbox
 * clock, so an injected fixed clock cannot freeze the window.
 */

export type RateDecision = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

class Window {
  times: number[] = [];
  head = 0;
}

export class RateLimiter {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();

  constructor(limit: number, windowMs = 60_000, now: () => number = () => performance.now()) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.now = now;
  }

  get enabled(): boolean {
    return Number.isFinite(this.limit) && this.limit > 0;
  }

  /** Accepts (and counts) a request for `account`, or says how long until a slot frees. */
  take(account: string): RateDecision {
    if (!this.enabled) return { ok: true, remaining: Number.POSITIVE_INFINITY };
    const now = this.now();
    let w = this.windows.get(account);
    if (!w) {
      w = new Window();
      this.windows.set(account, w);
    }
    const cutoff = now - this.windowMs;
    while (w.head < w.times.length && w.times[w.head]! <= cutoff) w.head++;
    if (w.head > 1024 && w.head * 2 > w.times.length) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    const inWindow = w.times.length - w.head;
    if (inWindow >= this.limit) {
      const oldest = w.times[w.times.length - this.limit]!;
      return { ok: false, retryAfterMs: Math.max(1, oldest + this.windowMs - now) };
    }
    w.times.push(now);
    return { ok: true, remaining: this.limit - inWindow - 1 };
  }
}
