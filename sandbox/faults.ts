/**
 * Fault injection (README "Faults"). Each decision is drawn from (seed, a per-sandbox counter), so a run with
 * the same seed and the same request order sees the same faults. API faults are decided before any work, so a
 * faulted request is never charged, except the lost answer, which is decided after the work and its charge.
 */
import { hash2, hashString, unit } from './random.ts';

export interface FaultOptions {
  /** Added to every API response. */
  latencyMs?: number;
  /** Share of requests answered 500/502/503 (some with an HTML body). */
  errorRate?: number;
  /** Of every `every` consecutive requests, the last `length` are answered 429 with `Retry-After: retryAfterS`. */
  rateLimitBurst?: { every: number; length: number; retryAfterS?: number };
  /** Share of requests whose socket is destroyed without an answer. */
  resetRate?: number;
  /** Share answered 200 with a cut-off JSON body (not charged). */
  malformedJsonRate?: number;
  /** Share of export downloads cut off part-way (Content-Length kept, the socket destroyed). */
  truncateDownloads?: number;
  /** Throttles export downloads. */
  downloadBytesPerSec?: number;
  /** Export jobs end `failed`. */
  exportFailure?: boolean;
  /** Share of addresses in a verify call whose upstream check fails (free, reported as errors). */
  verifyUpstreamFailureRate?: number;
  /**
   * Share of successful API calls whose answer is lost AFTER the work is done and charged: the client gets a 5xx
   * (which still carries `x-credits-charged`) or a reset connection instead of the answer.
   */
  lostAnswerRate?: number;
  /** How a lost answer is lost: `5xx`, `reset`, or `mixed` (default: half each, drawn from the seed). */
  lostAnswerAs?: '5xx' | 'reset' | 'mixed';
  /** Only calls to these paths lose answers (exact paths, e.g. `/v1/buyer-intent/contacts/export`; default all). */
  lostAnswerPaths?: string[];
  /** At most this many answers are lost from the time these options are set (default no limit). */
  lostAnswerMax?: number;
  /**
   * Holds each answer this long AFTER the work is done and charged (to stage a client that dies while a paid answer
   * is on its way); only for `answerDelayPaths` when given.
   */
  answerDelayMs?: number;
  answerDelayPaths?: string[];
  /**
   * Pads a successful answer with an extra top-level field (`sandbox_padding`, an array of small objects) to about
   * this many bytes: a very large answer that is still valid (a client ignores fields it does not know), for a client
   * whose event loop such an answer holds. Only for `answerPaddingPaths` when given, and at most `answerPaddingMax`
   * answers from the time these options are set (default no limit).
   */
  answerPaddingBytes?: number;
  answerPaddingPaths?: string[];
  answerPaddingMax?: number;
  /**
   * Writes a NUL (`\u0000`, valid JSON) into each successful answer's text: at the start of every `summary`, and as a
   * `sandbox_note` field of every `data` object (a field without a column of its own). What PostgreSQL cannot hold.
   */
  answerNul?: boolean;
}

/** How the answer of a call that did its work and was charged is lost. */
export type LostAnswer = { kind: 'kept' } | { kind: '5xx'; status: 500 | 502 | 503 } | { kind: 'reset' };

export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'rate_limited'; retryAfterS: number }
  | { kind: 'reset' }
  | { kind: 'error'; status: 500 | 502 | 503; html: boolean }
  | { kind: 'malformed' };

const NONE: FaultDecision = { kind: 'none' };

export class Faults {
  private options: FaultOptions;
  private readonly salt: number;
  private requests = 0;
  private downloads = 0;
  private answers = 0;
  private lostSinceSet = 0;
  private paddedSinceSet = 0;

  constructor(seed: number, options: FaultOptions = {}) {
    this.salt = hashString('faults', seed);
    this.options = { ...options };
  }

  /** Replaces every fault option (`set({})` switches all faults off). */
  set(options: FaultOptions): void {
    this.options = { ...options };
    this.lostSinceSet = 0;
    this.paddedSinceSet = 0;
  }

  get current(): Readonly<FaultOptions> {
    return this.options;
  }

  get latencyMs(): number {
    return Math.max(0, this.options.latencyMs ?? 0);
  }

  /** The fault (if any) for the next authenticated API request. */
  decide(): FaultDecision {
    const n = this.requests++;
    const o = this.options;
    const burst = o.rateLimitBurst;
    if (burst && burst.every > 0 && burst.length > 0 && n % burst.every >= burst.every - burst.length) {
      return { kind: 'rate_limited', retryAfterS: burst.retryAfterS ?? 1 };
    }
    const h = hash2(this.salt, n);
    if (o.resetRate && unit(hash2(h, 1)) < o.resetRate) return { kind: 'reset' };
    if (o.errorRate && unit(hash2(h, 2)) < o.errorRate) {
      const pick = hash2(h, 3);
      const status = ([500, 502, 503] as const)[pick % 3]!;
      return { kind: 'error', status, html: (pick >>> 8) % 2 === 0 };
    }
    if (o.malformedJsonRate && unit(hash2(h, 4)) < o.malformedJsonRate) return { kind: 'malformed' };
    return NONE;
  }

  /** How long to hold the answer of a successful call to `path` after its work and charge. */
  answerDelay(path: string): number {
    const o = this.options;
    if (!o.answerDelayMs || o.answerDelayMs <= 0) return 0;
    if (o.answerDelayPaths && !o.answerDelayPaths.includes(path)) return 0;
    return o.answerDelayMs;
  }

  /** For a successful answer of `path` about to be sent: the bytes to pad it to (0: not padded). */
  answerPadding(path: string): number {
    const o = this.options;
    if (!o.answerPaddingBytes || o.answerPaddingBytes <= 0) return 0;
    if (o.answerPaddingPaths && !o.answerPaddingPaths.includes(path)) return 0;
    if (o.answerPaddingMax !== undefined && this.paddedSinceSet >= o.answerPaddingMax) return 0;
    this.paddedSinceSet++;
    return o.answerPaddingBytes;
  }

  /** For a call to `path` that succeeded (work done, credits charged): whether its answer is lost, and how. */
  decideLostAnswer(path: string): LostAnswer {
    const o = this.options;
    const n = this.answers++;
    if (!o.lostAnswerRate) return { kind: 'kept' };
    if (o.lostAnswerPaths && !o.lostAnswerPaths.includes(path)) return { kind: 'kept' };
    if (o.lostAnswerMax !== undefined && this.lostSinceSet >= o.lostAnswerMax) return { kind: 'kept' };
    const h = hash2(this.salt ^ 0x10575, n);
    if (unit(h) >= o.lostAnswerRate) return { kind: 'kept' };
    this.lostSinceSet++;
    const as = o.lostAnswerAs ?? 'mixed';
    const pick = hash2(h, 11);
    if (as === 'reset' || (as === 'mixed' && pick % 2 === 0)) return { kind: 'reset' };
    return { kind: '5xx', status: ([500, 502, 503] as const)[(pick >>> 4) % 3]! };
  }

  /** Whether the upstream check of `email` fails in request number `requestSeq`. */
  verifyUpstreamFails(requestSeq: number, email: string): boolean {
    const rate = this.options.verifyUpstreamFailureRate;
    if (!rate) return false;
    return unit(hash2(hash2(this.salt ^ 0x5e1f, requestSeq), hashString(email))) < rate;
  }

  /** For the next download: the share of the body after which it is cut (undefined = not cut). */
  decideDownload(): { cutAt: number | undefined; bytesPerSec: number | undefined } {
    const n = this.downloads++;
    const o = this.options;
    const h = hash2(this.salt ^ 0xd0d0, n);
    const cut = o.truncateDownloads && unit(h) < o.truncateDownloads ? 0.1 + 0.8 * unit(hash2(h, 9)) : undefined;
    const rate = o.downloadBytesPerSec && o.downloadBytesPerSec > 0 ? o.downloadBytesPerSec : undefined;
    return { cutAt: cut, bytesPerSec: rate };
  }

  get exportFailure(): boolean {
    return this.options.exportFailure === true;
  }
}
