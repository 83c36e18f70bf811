/**
 * Faults on demand: the next calls (all of them, or those whose path contains `path`) answered with a status of
 * the fault's instead of their own: a 429 of either policy, a 500, 502 or 503. Per-record refusals, archived
 * records and expired tokens are the store's and the tokens' (see index.ts).
 */
import { z } from 'zod';
import type { RateLimitPolicy } from './errors.ts';

export interface Fault {
  status: 429 | 500 | 502 | 503;
  /** How many calls get it (default 1). */
  times?: number;
  /** A 429's policy (default the ten-second one). */
  policy?: RateLimitPolicy;
  /** Only calls whose path contains this (default every API call). */
  path?: string;
}

/** A fault as `POST /__admin/faults` takes it. */
export const faultSchema = z.object({
  status: z.union([z.literal(429), z.literal(500), z.literal(502), z.literal(503)]),
  times: z.number().int().positive().optional(),
  policy: z.enum(['TEN_SECONDLY_ROLLING', 'DAILY']).optional(),
  path: z.string().optional(),
});

export class Faults {
  private queue: { fault: Fault; left: number }[] = [];
  private stalls: { path: string; skip: number; left: number }[] = [];
  /** Calls stalled so far. */
  stalled = 0;

  /**
   * After `after` more calls whose path contains `path`, the next `times` are never read nor answered, until their
   * caller goes away.
   */
  stall(path: string, times = 1, after = 0): void {
    this.stalls.push({ path, skip: after, left: times });
  }

  /** Whether this call is to stall (counted). */
  takeStall(path: string): boolean {
    const entry = this.stalls.find((e) => e.left > 0 && path.includes(e.path));
    if (!entry) return false;
    if (entry.skip > 0) {
      entry.skip--;
      return false;
    }
    entry.left--;
    this.stalls = this.stalls.filter((e) => e.left > 0);
    this.stalled++;
    return true;
  }

  add(fault: Fault): void {
    this.queue.push({ fault, left: fault.times ?? 1 });
  }

  clear(): void {
    this.queue = [];
    this.stalls = [];
  }

  /** The fault this call gets, if any (and counts it down). */
  take(path: string): Fault | undefined {
    const entry = this.queue.find((e) => e.left > 0 && (e.fault.path === undefined || path.includes(e.fault.path)));
    if (!entry) return undefined;
    entry.left--;
    this.queue = this.queue.filter((e) => e.left > 0);
    return entry.fault;
  }
}
