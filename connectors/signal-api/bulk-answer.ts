/**
 * The fast path of the bulk-enrich answer (`POST /v1/companies/enrich/bulk`, about 1.8 MB of JSON per 100 domains):
 * hand-written checks that build the normalized result directly, for the shapes the service sends. It accepts a
 * strict subset of what `BulkEnrichSchema` accepts and, for that subset, builds exactly what the schema outputs
 * (same values, same key order; test/unit/client/bulk-answer-fast.test.ts compares the two on generated answers).
 * Anything it does not recognise (a numeric string, an unknown field where the schema would move or drop it, an
 * `error` item, an invalid value) makes it return undefined and the caller parses with the schema, which then
 * accepts with its own normalization or rejects naming the field.
 *
 * The input is a parsed JSON value (plain objects, arrays, strings, finite numbers, booleans, null).
 */
import type { z } from 'zod';
import { isoUtcOf, normalizeDomain } from './scalars.ts';
import {
  type BulkEnrichBody,
  type BulkEnrichItem,
  BulkEnrichSchema,
  type Company,
  CompanySchema,
  type Coverage,
  CoverageSchema,
  companyOf,
  type Signal,
  SignalSchema,
  signalOf,
  signalSummaryOf,
} from './schemas.ts';

type Json = Record<string, unknown>;

/** Thrown inside the fast path when the answer leaves it; caught once at its entry. */
const LEAVE = Symbol('leave the fast path');

function leave(): never {
  throw LEAVE;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown): Json {
  return isObject(value) ? value : leave();
}

function string(value: unknown): string {
  return typeof value === 'string' ? value : leave();
}

/** `z.string().nullish()`: a string, or undefined for null or absent. */
function optString(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : leave();
}

/** `num.nullish()` without the numeric-string case (the schema converts those; the fast path leaves). */
function optNumber(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' ? value : leave();
}

/** `isoDateTime`: the same conversion the schema applies. */
function date(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') leave();
  return isoUtcOf(value) ?? leave();
}

function optDate(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : date(value);
}

/** `z.array(z.string()).nullish()`; the parsed array is fresh, so it is kept rather than copied. */
function optStrings(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) leave();
  for (const s of value) if (typeof s !== 'string') leave();
  return value as string[];
}

/**
 * Copies the fields of `source` that are not in `known` onto `target`, in their order, as the loose schemas keep
 * them (a name the output already holds is overwritten in place, as by the schema's `Object.assign`). `__proto__`,
 * which the schema drops, leaves the fast path.
 */
function copyUnknown(target: Json, source: Json, known: ReadonlySet<string>): void {
  for (const key in source) {
    if (known.has(key)) continue;
    if (key === '__proto__') leave();
    target[key] = source[key];
  }
}

/** The fields an answer object's schema reads (any other field is the service's own, copied as sent). */
const fieldsOf = (schema: { in: { shape: object } }) => new Set(Object.keys(schema.in.shape));

const COMPANY_FIELDS = fieldsOf(CompanySchema);

/** Sets an optional field only when the answer had it, so absent fields stay absent (as the schema leaves them). */
function setDefined<T extends object, K extends keyof T>(out: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) out[key] = value;
}

function company(raw: unknown): Company {
  const c = object(raw);
  const revenue = c['revenue'];
  if (typeof revenue !== 'string' && typeof revenue !== 'number' && revenue !== undefined && revenue !== null) leave();
  const description = c['description'];
  const out = companyOf(
    optString(c['name']),
    string(c['domain']),
    optString(c['linkedin_url']),
    optStrings(c['industries']),
    optNumber(c['employee_count_low']),
    optNumber(c['employee_count_high']),
    revenue,
    description === undefined || description === null ? description : string(description),
  );
  copyUnknown(out, c, COMPANY_FIELDS);
  return out;
}

const SIGNAL_FIELDS = fieldsOf(SignalSchema);

/** The schema's `data`: `summary` first when it was sent, else last; the other fields as sent. */
function signalData(raw: unknown, summary: string): Signal['data'] {
  if (raw === undefined || raw === null) return { summary };
  const data = object(raw);
  if (Object.hasOwn(data, '__proto__')) leave();
  if (!Object.hasOwn(data, 'summary')) return { ...data, summary };
  for (const first in data) {
    // Sent first and a string: already in the schema's order, so the parsed object is kept.
    if (first === 'summary' && data['summary'] === summary) return data as Signal['data'];
    break;
  }
  const out: Json = { summary };
  for (const key in data) if (key !== 'summary') out[key] = data[key];
  return out as Signal['data'];
}

function signal(raw: unknown): Signal {
  const s = object(raw);
  const id = s['signal_id'];
  let signalId: string;
  if (typeof id === 'string' && id !== '') signalId = id;
  else if (typeof id === 'number') signalId = String(id);
  else leave();
  const rawData = s['data'];
  if (rawData !== undefined && rawData !== null) object(rawData);
  const summary = optString((rawData as Json | null | undefined)?.['summary']) ?? '';
  const c = s['company'];
  const out = signalOf(
    signalId,
    string(s['signal_type']),
    optString(s['signal_subtype']),
    optString(s['signal_name']),
    date(s['detected_at']),
    optString(s['association']),
    c === undefined || c === null ? undefined : company(c),
    signalData(rawData, summary),
  );
  copyUnknown(out, s, SIGNAL_FIELDS);
  return out;
}

const COVERAGE_FIELDS = fieldsOf(CoverageSchema);
const DATE_RANGE_FIELDS = new Set(['earliest', 'latest']);

function coverage(raw: unknown): Coverage {
  const c = object(raw);
  const out: Coverage = {};
  setDefined(out, 'total_before_filters', optNumber(c['total_before_filters']));
  setDefined(out, 'total_after_filters', optNumber(c['total_after_filters']));
  setDefined(out, 'signal_types_available', optStrings(c['signal_types_available']));
  const range = c['date_range'];
  if (range !== undefined && range !== null) {
    const r = object(range);
    const dateRange = { earliest: optDate(r['earliest']) ?? null, latest: optDate(r['latest']) ?? null };
    copyUnknown(dateRange, r, DATE_RANGE_FIELDS);
    out.date_range = dateRange;
  }
  copyUnknown(out, c, COVERAGE_FIELDS);
  return out;
}

/** `z.record(z.string(), num)` with numbers only: the parsed object is kept. */
function counts(raw: Json): Record<string, number> {
  if (Object.hasOwn(raw, '__proto__')) leave();
  for (const key in raw) if (typeof raw[key] !== 'number') leave();
  return raw as Record<string, number>;
}

const ITEM_FIELDS = new Set(['domain', 'status', 'company', 'signals', 'signal_summary', 'coverage']);

function item(raw: unknown): BulkEnrichItem {
  const x = object(raw);
  // Unknown fields (and `error`) would come first in the schema's output: rare, so the schema handles them.
  for (const key in x) if (!ITEM_FIELDS.has(key)) leave();
  const domain = normalizeDomain(string(x['domain']));
  const rawCompany = x['company'];
  const rawSignals = x['signals'];
  const present = (v: unknown) => v !== undefined && v !== null;
  const status = optString(x['status']) ?? (present(rawCompany) || present(rawSignals) ? 'ok' : 'not_found');
  if (status === 'not_found') {
    // Fields a `not_found` item should not have are validated and dropped by the schema: left to it.
    if (present(rawCompany) || present(rawSignals) || present(x['signal_summary']) || present(x['coverage'])) leave();
    return { domain, status };
  }
  if (status !== 'ok') leave();
  let signals: Signal[] = [];
  if (present(rawSignals)) {
    if (!Array.isArray(rawSignals)) leave();
    signals = new Array<Signal>(rawSignals.length);
    for (let i = 0; i < rawSignals.length; i++) signals[i] = signal(rawSignals[i]);
  }
  const rawSummary = x['signal_summary'];
  const out: BulkEnrichItem = {
    domain,
    status,
    company: present(rawCompany) ? company(rawCompany) : { name: '', domain },
    signals,
    signal_summary: present(rawSummary) ? counts(object(rawSummary)) : signalSummaryOf(signals),
  };
  if (present(x['coverage'])) out.coverage = coverage(x['coverage']);
  return out;
}

const SUMMARY_FIELDS = ['requested', 'ok', 'not_found', 'error', 'signals'] as const;

/** The answer normalized as `BulkEnrichSchema` would, or undefined when the schema must decide. */
export function fastBulkEnrichAnswer(body: unknown): BulkEnrichBody | undefined {
  try {
    const b = object(body);
    const rawResults = b['results'];
    if (!Array.isArray(rawResults)) leave();
    const results = new Array<BulkEnrichItem>(rawResults.length);
    for (let i = 0; i < rawResults.length; i++) results[i] = item(rawResults[i]);
    return { results, summary: summaryOf(b['summary'], results) };
  } catch (error) {
    if (error === LEAVE) return undefined;
    throw error;
  }
}

function summaryOf(raw: unknown, results: readonly BulkEnrichItem[]): BulkEnrichBody['summary'] {
  const s: Json = {};
  if (raw !== undefined && raw !== null) {
    const r = object(raw);
    for (const key of SUMMARY_FIELDS) if (r[key] !== undefined) s[key] = optNumber(r[key]) ?? null;
    copyUnknown(s, r, new Set(SUMMARY_FIELDS));
  }
  let ok = 0;
  let notFound = 0;
  let signals = 0;
  for (const r of results) {
    if (r.status === 'ok') {
      ok += 1;
      signals += r.signals.length;
    } else notFound += 1;
  }
  return Object.assign(s, {
    requested: (s['requested'] as number | null | undefined) ?? results.length,
    ok: (s['ok'] as number | null | undefined) ?? ok,
    not_found: (s['not_found'] as number | null | undefined) ?? notFound,
    error: (s['error'] as number | null | undefined) ?? 0,
    signals: (s['signals'] as number | null | undefined) ?? signals,
  });
}

/**
 * A bulk-enrich answer (the parsed JSON body) to the normalized result: the fast path when it recognises the
 * answer, else `BulkEnrichSchema` (whose error names the field). Measured by bench/micro/bulk-answer.ts.
 */
export function parseBulkEnrichAnswer(body: unknown): z.ZodSafeParseResult<BulkEnrichBody> {
  const data = fastBulkEnrichAnswer(body);
  return data === undefined ? BulkEnrichSchema.safeParse(body) : { success: true, data };
}
