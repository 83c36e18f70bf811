/**
 * The portal's API limits as HubSpot applies them to a private app: a rolling ten-second window (100 calls on
 * Free and Starter, 190 on Professional and Enterprise) and a daily limit (250,000 to 1,000,000), reported on every
 * answer in `X-HubSpot-RateLimit-*` headers. A call past either is answered 429 and not counted.
 */
import { type HubspotApiError, type RateLimitPolicy, rateLimited } from './errors.ts';

export interface RateLimitOptions {
  /** Calls allowed in one interval (default 100). 0 or Infinity: no interval limit. */
  perInterval: number;
  /** The rolling interval's length (default 10,000 ms; tests shorten it). */
  intervalMs: number;
  /** Calls allowed a day (default 250,000). */
  daily: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitOptions = { perInterval: 100, intervalMs: 10_000, daily: 250_000 };

export class PortalLimits {
  private readonly options: RateLimitOptions;
  private readonly clock: () => number;
  private window: number[] = [];
  private day = '';
  private usedToday = 0;

  constructor(options: RateLimitOptions, clock: () => number) {
    this.options = options;
    this.clock = clock;
  }

  private roll(now: number): void {
    const start = now - this.options.intervalMs;
    let drop = 0;
    while (drop < this.window.length && (this.window[drop] as number) <= start) drop++;
    if (drop) this.window = this.window.slice(drop);
    const day = new Date(now).toISOString().slice(0, 10);
    if (day !== this.day) {
      this.day = day;
      this.usedToday = 0;
    }
  }

  private limited(): boolean {
    const { perInterval } = this.options;
    return perInterval > 0 && Number.isFinite(perInterval);
  }

  headers(): Record<string, string> {
    const { perInterval, intervalMs, daily } = this.options;
    const headers: Record<string, string> = {
      'X-HubSpot-RateLimit-Daily': String(daily),
      'X-HubSpot-RateLimit-Daily-Remaining': String(Math.max(0, daily - this.usedToday)),
    };
    if (this.limited()) {
      headers['X-HubSpot-RateLimit-Interval-Milliseconds'] = String(intervalMs);
      headers['X-HubSpot-RateLimit-Max'] = String(perInterval);
      headers['X-HubSpot-RateLimit-Remaining'] = String(Math.max(0, perInterval - this.window.length));
    }
    return headers;
  }

  /** Counts a call, or the 429 it gets (with the headers saying nothing is left). */
  take(): HubspotApiError | undefined {
    const now = this.clock();
    this.roll(now);
    if (this.usedToday >= this.options.daily) return rateLimited('DAILY', this.headers());
    if (this.limited() && this.window.length >= this.options.perInterval) {
      return rateLimited('TEN_SECONDLY_ROLLING', this.headers());
    }
    this.window.push(now);
    this.usedToday++;
    return undefined;
  }

  /** A 429 of the given policy, as the limit itself would give it (a fault burst). */
  refuse(policy: RateLimitPolicy): HubspotApiError {
    const headers = this.headers();
    if (policy === 'DAILY') headers['X-HubSpot-RateLimit-Daily-Remaining'] = '0';
    else headers['X-HubSpot-RateLimit-Remaining'] = '0';
    return rateLimited(policy, headers);
  }
}
