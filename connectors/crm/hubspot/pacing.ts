/**
 * The writer's own pacing against HubSpot's limits, read from the `X-HubSpot-RateLimit-*` headers of every answer:
 * no call is sent while the ten-second window is spent (the writer waits the window out); a 429 of the ten-second
 * policy waits `Retry-After` or the window and asks again, so it slows a write-back and never fails it; the daily
 * limit spent (a 429 `DAILY`, or no call left but the reserve) stops the write: what is left is not attempted, for
 * the next night. 5xx answers and failed connections are asked again after growing pauses, then given up.
 */
import { CrmUnavailableError } from '../../errors.ts';
import { failureOf, type HubspotFailure } from './client.ts';

export interface PacingOptions {
  /** Pauses before asking again after a 5xx or a failed connection (default 1, 2, 4, 8, 16 s). */
  serverRetryDelaysMs: number[];
  /** The longest a write waits on 429s in all before giving up (default 15 minutes). */
  maxRateLimitWaitMs: number;
  /** Daily calls the write-back leaves to the portal's other integrations (default 0). */
  dailyReserve: number;
  onPause?: (pause: { ms: number; reason: string }) => void;
  /** Told of every call sent, refused ones included (what the portal's logs count). */
  onCall?: () => void;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_PACING: PacingOptions = {
  serverRetryDelaysMs: [1_000, 2_000, 4_000, 8_000, 16_000],
  maxRateLimitWaitMs: 15 * 60_000,
  dailyReserve: 0,
};

const DEFAULT_WINDOW_MS = 10_000;

/** The code of the `CrmUnavailableError` a spent daily limit raises: nothing more is sent today. */
export const DAILY_LIMIT = 'DAILY';

const dailyLimitReached = () =>
  new CrmUnavailableError(
    'hubspot',
    DAILY_LIMIT,
    "the portal's daily API limit is reached; the rest waits for the next night",
  );

function header(headers: Record<string, string> | undefined, name: string): number | undefined {
  const raw = headers?.[name.toLowerCase()] ?? headers?.[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class HubspotPacer {
  private readonly options: PacingOptions;
  private intervalRemaining: number | undefined;
  private intervalMs = DEFAULT_WINDOW_MS;
  private dailyRemaining: number | undefined;
  private rateLimitWaited = 0;

  constructor(options: Partial<PacingOptions> = {}) {
    this.options = { ...DEFAULT_PACING, ...options };
  }

  private async pause(ms: number, reason: string): Promise<void> {
    this.options.onPause?.({ ms, reason });
    await (this.options.sleep ?? realSleep)(ms);
  }

  private learn(headers: Record<string, string> | undefined): void {
    this.intervalRemaining = header(headers, 'X-HubSpot-RateLimit-Remaining') ?? this.intervalRemaining;
    this.intervalMs = header(headers, 'X-HubSpot-RateLimit-Interval-Milliseconds') ?? this.intervalMs;
    this.dailyRemaining = header(headers, 'X-HubSpot-RateLimit-Daily-Remaining') ?? this.dailyRemaining;
  }

  private async beforeCall(): Promise<void> {
    if (this.dailyRemaining !== undefined && this.dailyRemaining <= this.options.dailyReserve) {
      throw dailyLimitReached();
    }
    if (this.intervalRemaining === 0) {
      await this.pause(this.intervalMs, 'HubSpot ten-second limit: the window is spent');
      this.intervalRemaining = undefined;
    }
  }

  private async onRateLimited(failure: HubspotFailure): Promise<void> {
    if (failure.policyName === 'DAILY') throw dailyLimitReached();
    const retryAfter = header(failure.headers, 'Retry-After');
    const ms = retryAfter !== undefined ? retryAfter * 1000 : this.intervalMs;
    if (this.rateLimitWaited + ms > this.options.maxRateLimitWaitMs) {
      throw new CrmUnavailableError('hubspot', failure.category, 'still rate limited after the longest wait allowed');
    }
    this.rateLimitWaited += ms;
    this.intervalRemaining = undefined;
    await this.pause(ms, `HubSpot 429 ${failure.policyName ?? failure.category}`);
  }

  /** Sends a call paced by the limits; its answer, or what it threw once pacing and retries could do no more. */
  async send<T extends { headers: Record<string, string> }>(call: () => Promise<T>): Promise<T> {
    let serverFailures = 0;
    for (;;) {
      await this.beforeCall();
      this.options.onCall?.();
      try {
        const answer = await call();
        this.learn(answer.headers);
        return answer;
      } catch (error) {
        const failure = failureOf(error);
        if (failure) this.learn(failure.headers);
        if (failure?.status === 429) {
          await this.onRateLimited(failure);
          continue;
        }
        const delay = this.options.serverRetryDelaysMs[serverFailures++];
        if ((failure === undefined || failure.status >= 500) && delay !== undefined) {
          await this.pause(delay, `HubSpot ${failure ? `answered ${failure.status}` : 'could not be reached'}`);
          continue;
        }
        throw error;
      }
    }
  }
}
