/**
 * Every call of the write-back goes through `paced`: before it, a look at the org's daily API usage (jsforce keeps the
 * last `Sforce-Limit-Info: api-usage=n/m` in `conn.limitInfo`): past `reserveShare` of the limit each call waits
 * `nearLimitPauseMs`, so the write-back leaves the rest of the day's requests to the org's other users; after it, an
 * outage, a 429, the request limit or a cut connection pauses the write-back (doubling, up to `maxPauseMs`) and
 * tries again, never failing the night for it, until `maxAttempts`; then a retryable `CrmUnavailableError`. Every
 * pause is reported through `onPause`. A refused session is a `CrmAuthError`, a refused call a `CrmRequestError`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CrmAuthError, CrmRequestError, CrmUnavailableError, KitError } from '../../errors.ts';
import type { SalesforceConnection } from './auth.ts';
import { callErrorCode, classifyCallError } from './classify.ts';

export interface PacingOptions {
  /** Attempts of one call through outages and 429s before it is given up as `CrmUnavailableError` (default 8). */
  maxAttempts: number;
  /** The first pause after a failed attempt (default 1 s), doubled each time up to `maxPauseMs` (default 60 s). */
  firstPauseMs: number;
  maxPauseMs: number;
  /** Share of the daily API request limit past which every call waits `nearLimitPauseMs` (default 0.9, 2 s). */
  reserveShare: number;
  nearLimitPauseMs: number;
}

export const DEFAULT_PACING: PacingOptions = {
  maxAttempts: 8,
  firstPauseMs: 1000,
  maxPauseMs: 60_000,
  reserveShare: 0.9,
  nearLimitPauseMs: 2000,
};

export interface Pacer {
  conn: SalesforceConnection;
  options: PacingOptions;
  onPause: ((pause: { ms: number; reason: string }) => void) | undefined;
  /** Calls made through the pacer (each attempt counts). */
  calls: number;
}

async function pause(pacer: Pacer, ms: number, reason: string): Promise<void> {
  pacer.onPause?.({ ms, reason });
  await sleep(ms);
}

async function waitForLimit(pacer: Pacer): Promise<void> {
  const usage = (pacer.conn.limitInfo as { apiUsage?: { used: number; limit: number } }).apiUsage;
  if (!usage || usage.limit <= 0 || usage.used < usage.limit * pacer.options.reserveShare) return;
  await pause(
    pacer,
    pacer.options.nearLimitPauseMs,
    `api-usage=${usage.used}/${usage.limit}: near the org's daily limit`,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function typed(what: string, error: unknown): Error {
  if (error instanceof KitError) return error;
  const code = callErrorCode(error);
  const kind = classifyCallError(error);
  const message = `${what}: ${messageOf(error)}`;
  if (kind === 'auth') {
    return new CrmAuthError(
      'salesforce',
      code,
      `${message} (the session was refused; with SALESFORCE_INSTANCE_URL + SALESFORCE_ACCESS_TOKEN nothing can refresh it: set the JWT bearer settings or a new token)`,
      { cause: error },
    );
  }
  return kind === 'pause'
    ? new CrmUnavailableError('salesforce', code, message, { cause: error })
    : new CrmRequestError('salesforce', code, message, { cause: error });
}

/** `call` (one Salesforce request, named `what` in pauses and errors), paced and tried again through outages. */
export async function paced<T>(pacer: Pacer, what: string, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await waitForLimit(pacer);
    pacer.calls++;
    try {
      return await call();
    } catch (error) {
      if (classifyCallError(error) !== 'pause' || error instanceof KitError || attempt >= pacer.options.maxAttempts) {
        throw typed(what, error);
      }
      const ms = Math.min(pacer.options.firstPauseMs * 2 ** (attempt - 1), pacer.options.maxPauseMs);
      await pause(pacer, ms, `${what}: ${callErrorCode(error)}`);
    }
  }
}
