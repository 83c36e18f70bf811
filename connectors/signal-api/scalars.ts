/**
 * The scalars of the Signal Data Service's payloads, read tolerantly and written in one form: date-times, ids,
 * numbers, domains and LinkedIn URLs. Plain functions first, then the zod schemas the payload schemas are built of.
 *
 * Date-times in: ISO 8601 with `Z`, an offset (`+00:00`) or none (read as UTC: the spec says all times are UTC),
 * with or without fractional seconds, or epoch seconds/milliseconds. Out: `2026-03-01T12:00:00.000Z`.
 */
import { z } from 'zod';

// ─── date-times ──────────────────────────────────────────────────────────────────────────────────────────────

const NO_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** Epoch milliseconds of an ISO 8601 string (any offset; none means UTC) or of epoch ms/s; undefined if invalid. */
export function parseDateTime(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    return value < 1e11 ? value * 1000 : value; // epoch seconds (before 5138) or epoch ms
  }
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  if (s === '') return undefined;
  const ms = Date.parse(NO_OFFSET.test(s) ? `${s.replace(' ', 'T')}Z` : s);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.mmm]Z` whose day exists in every month and whose hour is below 24: already the canonical
 * form (but for `.000`), so no Date is needed. Every signal's `detected_at` takes this path in bulk answers.
 */
const CANONICAL_UTC = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{3})?Z$/;

/** ISO 8601 UTC with `Z` and milliseconds, or undefined for a value that is not a date-time. */
export function isoUtcOf(value: unknown): string | undefined {
  if (typeof value === 'string' && CANONICAL_UTC.test(value)) {
    return value.length === 24 ? value : `${value.slice(0, -1)}.000Z`; // with or without the milliseconds
  }
  const ms = parseDateTime(value);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** ISO 8601 UTC with `Z` and milliseconds. Throws on a value that is not a date-time. */
export function toIsoUtc(value: unknown): string {
  const iso = isoUtcOf(value);
  if (iso === undefined) throw new TypeError(`not a date-time: ${String(value)}`);
  return iso;
}

// ─── domains, URLs, ids ──────────────────────────────────────────────────────────────────────────────────────

/** A domain as the service sends it, in the kit's form: trimmed, lower case. */
export function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase();
}

/** `https://www.linkedin.com` + a relative path; absolute URLs unchanged; a missing scheme gets `https://`. */
export function absoluteLinkedinUrl(url: string): string {
  const u = url.trim();
  if (/^https?:\/\//i.test(u)) return u;
  if (/^(www\.)?linkedin\.com(\/|$)/i.test(u)) return `https://${u.startsWith('www.') ? u : `www.${u}`}`;
  if (u.startsWith('//')) return `https:${u}`;
  return `https://www.linkedin.com${u.startsWith('/') ? '' : '/'}${u}`;
}

/**
 * Characters a signal id may hold (`sig_<hex>`, a UUID, …): it becomes part of a workflow id (`signal-<id>`) and
 * of object keys, so anything else is refused where an id is used that way.
 */
export const SIGNAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;

// ─── objects ─────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * `known` with the fields the kit does not know about added after it, as sent; typed so that the output type of
 * a schema says so (an object spread of a rest would drop the index signature).
 */
export function withUnknownFields<T extends object>(known: T, unknown: object): T & { [key: string]: unknown } {
  return Object.assign(known, unknown) as T & { [key: string]: unknown };
}

// ─── zod schemas of the scalars ──────────────────────────────────────────────────────────────────────────────

/** A number, also when sent as a numeric string. */
export const num = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v),
  z.number(),
);

/** A date-time as an ISO 8601 string (any offset, with or without milliseconds) or epoch milliseconds. */
export const dateTime = z
  .union([z.string(), z.number()])
  .refine((v) => parseDateTime(v) !== undefined, { message: 'not a date-time' });

/** A date-time in any admitted form, output as ISO 8601 UTC with `Z` and milliseconds. */
export const isoDateTime = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const iso = isoUtcOf(v);
  if (iso !== undefined) return iso;
  ctx.issues.push({ code: 'custom', message: 'not a date-time', input: v });
  return z.NEVER;
});

/** An id sent as a string or a number, output as a string. */
export const id = z.union([z.string().min(1), z.number()]).transform((v) => String(v));

/** A signal id (string or number), output as a string of the characters `SIGNAL_ID_PATTERN` allows. */
export const signalId = id.pipe(
  z.string().regex(SIGNAL_ID_PATTERN, 'must be 1..200 characters of letters, digits, _ . : -'),
);
