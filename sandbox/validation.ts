/**
 * Request validation: strict zod schemas (unknown fields rejected) whose first issue becomes a
 * `422 validation_error` naming the field; malformed JSON is `400 invalid_json` (handled by the server).
 */
import { z } from 'zod';
import { ALL_SUBTYPES, TYPE_INDEX } from './data/signal-types.ts';
import { validationError } from './errors.ts';
import { parseIsoDateTime } from './time.ts';

function fieldOf(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') return [...path, issue.keys[0] ?? ''].join('.');
  return path.length === 0 ? 'body' : path.join('.');
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return 'unknown field';
  return issue.message;
}

/** Parses `value` with `schema` or throws the 422 for its first issue. */
export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw validationError(fieldOf(issue), messageOf(issue));
}

/** Query parameters as an object of strings; a repeated parameter is an error. */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) {
    if (k in out) throw validationError(k, 'given more than once');
    out[k] = v;
  }
  return out;
}

/** An ISO 8601 datetime (`Z` or an offset) or date; parsed to epoch ms. */
export const dateTime = z
  .string()
  .refine((s) => parseIsoDateTime(s) !== undefined, { error: 'must be an ISO 8601 datetime' })
  .transform((s) => parseIsoDateTime(s)!);

export const signalTypes = z
  .array(z.string().refine((t) => TYPE_INDEX.has(t), { error: 'unknown signal type (see GET /v1/signals/types)' }))
  .max(100, { error: 'at most 100 entries' });

export const signalSubtypes = z
  .array(z.string().refine((t) => ALL_SUBTYPES.has(t), { error: 'unknown signal subtype (see GET /v1/signals/types)' }))
  .max(25, { error: 'at most 25 entries' });

export const enrichLimit = z
  .int({ error: 'must be an integer' })
  .min(1, { error: 'must be at least 1' })
  .max(500, { error: 'at most 500 signals per call' });

export function boundedInt(min: number, max: number): z.ZodInt {
  return z
    .int({ error: 'must be an integer' })
    .min(min, { error: `must be at least ${min}` })
    .max(max, { error: `must be at most ${max}` });
}

/** A query-string integer in [min, max]. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^-?\d+$/, { error: 'must be an integer' })
    .transform(Number)
    .pipe(boundedInt(min, max));
}

export const nonEmptyString = z.string().trim().min(1, { error: 'must not be empty' });

/** Lower-cased set of a string list, or undefined for an absent/empty one. */
export function lowerSet(list: readonly string[] | undefined): Set<string> | undefined {
  return list && list.length > 0 ? new Set(list.map((s) => s.toLowerCase())) : undefined;
}

export function asSet(list: readonly string[] | undefined): Set<string> | undefined {
  return list && list.length > 0 ? new Set(list) : undefined;
}
