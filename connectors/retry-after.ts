import { capRetryAfter } from './signal-api/limits.ts';

/**
 * An HTTP `Retry-After` in milliseconds from `now`: delay-seconds (`120`, also `1.5`) or an HTTP date, capped at
 * MAX_RETRY_AFTER_MS. Undefined when absent or unreadable. The one parser for the API client, webhook destinations
 * and the worker's metrics.
 */
export function parseRetryAfter(
  value: string | readonly string[] | null | undefined,
  now: number | Date = Date.now(),
): number | undefined {
  const raw = typeof value === 'string' ? value : value?.[0];
  const v = raw?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return capRetryAfter(Math.ceil(Number(v) * 1000));
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return capRetryAfter(at - (typeof now === 'number' ? now : now.getTime()));
}
