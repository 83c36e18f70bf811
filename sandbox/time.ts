/**
 * Time constants and the two timestamp forms the spec says the real service writes (section 2.1): a `Z` suffix
 * (enrich responses) and a `+00:00` offset with milliseconds (lookups, search).
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const YEAR = 365 * DAY;

/** The fixed epoch every synthetic timeline is laid out around: 2026-01-01T00:00:00Z. */
export const SANDBOX_EPOCH_MS = Date.UTC(2026, 0, 1);
/** Timelines start two years before the epoch ... */
export const TIMELINE_START_MS = SANDBOX_EPOCH_MS - 2 * YEAR;
/** ... and continue well into the future (revealed as the clock passes). */
export const TIMELINE_END_MS = SANDBOX_EPOCH_MS + 6 * YEAR;

/** `2026-03-01T12:00:00Z` (milliseconds kept only when not zero). */
export function isoZ(ms: number): string {
  const s = new Date(ms).toISOString();
  return s.endsWith('.000Z') ? s.slice(0, -5) + 'Z' : s;
}

/** `2026-03-01T12:00:00.000+00:00`. */
export function isoOffset(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1) + '+00:00';
}

/** `2026-03-01T12:00:00.000Z` (plain ISO, used by exports, webhooks, verification). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `YYYY-MM-DD`. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|z|[+-]\d{2}:?\d{2})?)?$/;

/** Parses an ISO 8601 date or datetime (`Z`, an offset, or none = UTC); undefined when it is not one. */
export function parseIsoDateTime(s: string): number | undefined {
  if (!ISO_DATETIME.test(s)) return undefined;
  let text = s.replace(' ', 'T');
  if (text.length === 10) text += 'T00:00:00Z';
  else if (!/(?:Z|z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z';
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
