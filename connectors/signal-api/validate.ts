/**
 * Checks made before anything is sent. Each failure is a `ValidationError` with `status` 0, `code`
 * `validation_error`, `field` naming the field, and a message naming the field and the limit.
 */
import { clientValidationError } from '../errors.ts';
import {
  MAX_BULK_ENRICH_DOMAINS,
  MAX_BULK_VERIFY_EMAILS,
  MAX_SIGNAL_SUBTYPES,
  MAX_SIGNALS_PER_CALL,
  TOPIC_ID_PATTERN,
} from './limits.ts';
import { parseDateTime } from './scalars.ts';
import type { DateInput } from './types.ts';

function isInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function checkSignalLimit(limit: unknown, field = 'limit'): void {
  if (limit === undefined) return;
  if (!isInteger(limit) || limit < 1)
    throw clientValidationError(field, `must be an integer from 1 to ${MAX_SIGNALS_PER_CALL}`);
  if (limit > MAX_SIGNALS_PER_CALL) {
    throw clientValidationError(field, `at most ${MAX_SIGNALS_PER_CALL} signals per call (got ${limit})`);
  }
}

export function checkPositiveInteger(value: unknown, field: string): void {
  if (value === undefined) return;
  if (!isInteger(value) || value < 1) throw clientValidationError(field, 'must be a positive integer');
}

export function checkStringArray(value: unknown, field: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw clientValidationError(field, 'must be an array of strings');
  value.forEach((v, i) => {
    if (typeof v !== 'string' || v.trim() === '')
      throw clientValidationError(`${field}[${i}]`, 'must be a non-empty string');
  });
}

export function checkSubtypes(value: unknown): void {
  checkStringArray(value, 'signal_subtypes');
  if (Array.isArray(value) && value.length > MAX_SIGNAL_SUBTYPES) {
    throw clientValidationError('signal_subtypes', `at most ${MAX_SIGNAL_SUBTYPES} entries (got ${value.length})`);
  }
}

function checkBatch(value: unknown, field: string, noun: string, max: number): void {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) {
    throw clientValidationError(field, `at least one ${noun} is required`);
  }
  checkStringArray(value, field);
  if ((value as unknown[]).length > max) {
    throw clientValidationError(field, `at most ${max} ${noun}s per request (got ${(value as unknown[]).length})`);
  }
}

export function checkDomains(value: unknown): void {
  checkBatch(value, 'domains', 'domain', MAX_BULK_ENRICH_DOMAINS);
}

export function checkEmails(value: unknown): void {
  checkBatch(value, 'emails', 'email', MAX_BULK_VERIFY_EMAILS);
}

export function checkTopicIds(value: unknown, field = 'topic_ids'): void {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) {
    throw clientValidationError(field, 'at least one topic id is required');
  }
  if (!Array.isArray(value)) throw clientValidationError(field, 'must be an array of topic ids (b2b_<number>)');
  value.forEach((v, i) => {
    if (typeof v !== 'string' || !TOPIC_ID_PATTERN.test(v)) {
      throw clientValidationError(`${field}[${i}]`, `${JSON.stringify(v)} is not a topic id of the form b2b_<number>`);
    }
  });
}

/** At least one of `fields` must be a non-empty string. */
export function requireOneOf(params: object, fields: readonly string[]): void {
  const p = params as Record<string, unknown>;
  for (const f of fields) {
    const v = p[f];
    if (v !== undefined && v !== null && (typeof v !== 'string' || v.trim() === '')) {
      throw clientValidationError(f, 'must be a non-empty string');
    }
  }
  if (!fields.some((f) => typeof p[f] === 'string')) {
    const list = fields.length === 2 ? fields.join(' or ') : `${fields.slice(0, -1).join(', ')} or ${fields.at(-1)}`;
    throw clientValidationError(fields[0] ?? 'identifier', `no identifier given: one of ${list} is required`);
  }
}

export function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw clientValidationError(field, 'must be a non-empty string');
  return value;
}

/** A `Date` or ISO string, sent as ISO 8601 UTC. */
export function dateParam(value: DateInput | undefined | null, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = parseDateTime(value);
  if (ms === undefined || (typeof value !== 'string' && !(value instanceof Date))) {
    throw clientValidationError(field, 'must be a Date or an ISO 8601 date-time');
  }
  return new Date(ms).toISOString();
}
