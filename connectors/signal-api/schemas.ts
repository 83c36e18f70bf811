/**
 * The shape of every answer of the Signal Data Service: the one source of the client's result types.
 *
 * Each answer has two zod schemas here. `<Name>Schema` parses what the service sends and outputs the kit's
 * normalized form (its `z.output` is the public type); `<Name>Out` describes that output (for JSON Schema and as
 * the transforms' declared return type, so the two cannot drift apart). `scalars.ts` holds the scalars both use.
 *
 * Tolerant in: every variant the spec admits parses (`sig_` or UUID ids, `Z` or `+00:00` timestamps with or
 * without milliseconds, optional fields absent or null, numbers sent as numeric strings), unknown fields are kept,
 * and only what the kit cannot work without is required.
 *
 * Strict out:
 * - timestamps: ISO 8601 UTC with `Z` and milliseconds (`2026-03-01T12:00:00.000Z`), whatever offset came in;
 *   a timestamp without an offset is read as UTC (the spec says all times are UTC);
 * - domains: trimmed, lower case;
 * - `signal_name`: `data.summary` when the service sent an empty one;
 * - `linkedin_url`: absolute (`https://www.linkedin.com` + the relative path the service may send, `/company/acme`),
 *   and the same value again as `linkedin_url_absolute` (its name before `linkedin_url` itself was made absolute);
 * - optional fields: absent when unknown (null is dropped), except where null says something (`description`,
 *   `email_validation_status`, `next_cursor`, …);
 * - unknown fields: kept as sent. Type-specific `data` is kept as sent.
 */
import { z } from 'zod';
import { absoluteLinkedinUrl, id, isoDateTime, normalizeDomain, num } from './scalars.ts';

const strings = z.array(z.string());
const optString = z.string().nullish();
const optNum = num.nullish();
const optDate = isoDateTime.nullish();
const counts = z.record(z.string(), z.number());

/** The same zod type for each of `names`, so one list of field names serves an answer's input and its output. */
function fields<const K extends string, T extends z.ZodType>(names: readonly K[], type: T): Record<K, T> {
  return Object.fromEntries(names.map((name) => [name, type])) as Record<K, T>;
}

/** `{ <key>: [...] }`, or a bare array of the items. */
function listOrBareArray<const K extends string, T extends z.ZodType>(key: K, item: T) {
  const list = z.array(item);
  return z.union([
    z.looseObject(fields([key], list)),
    list.transform((items) => ({ [key]: items }) as Record<K, z.output<T>[]> & { [k: string]: unknown }),
  ]);
}

/** `{ <key>: [...], count }`; a `count` the service left out is the number of items. */
function countedList<const K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.looseObject({ ...fields([key], z.array(item)), count: optNum }).transform((body) => {
    const { [key]: items, count, ...rest } = body as Record<string, unknown> & { count?: number | null };
    const list = items as z.output<T>[];
    return { [key]: list, count: count ?? list.length, ...rest } as Record<K, z.output<T>[]> & {
      count: number;
      [k: string]: unknown;
    };
  });
}

/** `sent` with each of `counted`'s fields the service left out (or sent as null) filled in from `counted`. */
function withCounted<T extends Record<string, number>>(sent: Record<string, unknown>, counted: T): typeof sent & T {
  const out: Record<string, unknown> = { ...sent };
  for (const [k, n] of Object.entries(counted)) out[k] = sent[k] ?? n;
  return out as typeof sent & T;
}

function setIfPresent(target: object, key: string, value: unknown): void {
  if (value !== null && value !== undefined) (target as Record<string, unknown>)[key] = value;
}

/**
 * Every company and person the client builds gets its LinkedIn URL here: absolute, whether the service sent
 * `https://www.linkedin.com/company/acme` or `/company/acme`, so that no line, table or CRM file holds a relative one.
 */
function withLinkedin(target: object, url: string | null | undefined): void {
  if (url) {
    const absolute = absoluteLinkedinUrl(url);
    (target as Record<string, unknown>)['linkedin_url'] = absolute;
    (target as Record<string, unknown>)['linkedin_url_absolute'] = absolute;
  }
}

/** Every field of `source` that is not null or undefined, in its order. */
function copyPresent(target: object, source: object): void {
  for (const [k, v] of Object.entries(source))
    if (v !== null && v !== undefined) (target as Record<string, unknown>)[k] = v;
}

function cursorOf(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  return String(value);
}

function missing(ctx: z.core.$RefinementCtx, field: string, input: unknown): never {
  ctx.issues.push({ code: 'custom', message: 'missing', path: [field], input });
  return z.NEVER as never;
}

// ─── signals and companies (spec 2.1 to 2.5) ─────────────────────────────────────────────────────────────────

export const CompanyOut = z.looseObject({
  name: z.string(),
  /** Lower-case root domain, the join key. */
  domain: z.string(),
  /** Absolute (`https://www.linkedin.com/company/acme`), also when the service sent a relative `/company/acme`. */
  linkedin_url: z.string().optional(),
  /** The same as `linkedin_url` (kept for readers of the earlier field). */
  linkedin_url_absolute: z.string().optional(),
  industries: strings.optional(),
  employee_count_low: z.number().optional(),
  employee_count_high: z.number().optional(),
  revenue: z.string().optional(),
  description: z.string().nullable().optional(),
});
export type Company = z.output<typeof CompanyOut>;

/**
 * The normalized company of its fields as read, in the conventional field order; the caller adds the unknown
 * fields. The one place a Company is built (`CompanySchema`, bulk-answer.ts's fast path): fields one by one, as
 * `signalOf` takes them, because it runs for every signal's company of a bulk answer.
 */
export function companyOf(
  name: string | null | undefined,
  domain: string,
  linkedin_url: string | null | undefined,
  industries: string[] | null | undefined,
  employee_count_low: number | null | undefined,
  employee_count_high: number | null | undefined,
  revenue: string | number | null | undefined,
  description: string | null | undefined,
): Company {
  const out: Company = { name: name ?? '', domain: normalizeDomain(domain) };
  withLinkedin(out, linkedin_url);
  setIfPresent(out, 'industries', industries);
  setIfPresent(out, 'employee_count_low', employee_count_low);
  setIfPresent(out, 'employee_count_high', employee_count_high);
  setIfPresent(out, 'revenue', revenue === null || revenue === undefined ? revenue : String(revenue));
  if (description !== undefined) out.description = description;
  return out;
}

export const CompanySchema = z
  .looseObject({
    name: optString,
    domain: z.string(),
    linkedin_url: optString,
    industries: strings.nullish(),
    employee_count_low: optNum,
    employee_count_high: optNum,
    revenue: z.union([z.string(), z.number()]).nullish(),
    description: optString,
  })
  .transform((c): Company => {
    // The known fields are named here only to leave the unknown ones in `rest`.
    const {
      name,
      domain,
      linkedin_url,
      industries,
      employee_count_low,
      employee_count_high,
      revenue,
      description,
      ...rest
    } = c;
    const out = companyOf(
      c.name,
      c.domain,
      c.linkedin_url,
      c.industries,
      c.employee_count_low,
      c.employee_count_high,
      c.revenue,
      c.description,
    );
    return Object.assign(out, rest);
  });

export const SignalOut = z.looseObject({
  /** `sig_<id>` or a UUID, as sent. */
  signal_id: z.string(),
  signal_type: z.string(),
  /** '' when the service sent none. */
  signal_subtype: z.string(),
  /** The display name, or `data.summary` when the service sent an empty one. */
  signal_name: z.string(),
  detected_at: z.iso.datetime(),
  /** `company` or `contact`. */
  association: z.string().optional(),
  company: CompanyOut.optional(),
  data: z.looseObject({ summary: z.string() }),
});
export type Signal = z.output<typeof SignalOut>;
export type SignalData = Signal['data'];

type Read = string | null | undefined;

/**
 * The normalized signal of its fields as read (ids and date-times already in the kit's form), in the conventional
 * field order (scalars, company, data); the caller adds the unknown fields. The one place a Signal is built
 * (`SignalSchema`, the legacy answer, bulk-answer.ts's fast path); it runs for every signal of a bulk answer,
 * thousands per call, so it takes its fields one by one: no object is made only to pass them.
 */
export function signalOf(
  signal_id: string,
  signal_type: string,
  signal_subtype: Read,
  signal_name: Read,
  detected_at: string,
  association: Read,
  company: Company | null | undefined,
  data: SignalData,
): Signal {
  const out = {
    signal_id,
    signal_type,
    signal_subtype: signal_subtype ?? '',
    // The display name, or `data.summary` when the service sent none or a blank one.
    signal_name: signal_name && signal_name.trim() !== '' ? signal_name : data.summary,
    detected_at,
  } as Signal;
  setIfPresent(out, 'association', association);
  if (company) out.company = company;
  out.data = data;
  return out;
}

export const SignalSchema = z
  .looseObject({
    signal_id: id,
    signal_type: z.string(),
    signal_subtype: optString,
    signal_name: optString,
    detected_at: isoDateTime,
    association: optString,
    company: CompanySchema.nullish(),
    data: z.looseObject({ summary: optString }).nullish(),
  })
  .transform((s): Signal => {
    const { signal_id, signal_type, signal_subtype, signal_name, detected_at, association, company, data, ...rest } = s;
    const out = signalOf(signal_id, signal_type, signal_subtype, signal_name, detected_at, association, company, {
      ...data,
      summary: data?.summary ?? '',
    });
    return Object.assign(out, rest);
  });

export const CoverageOut = z.looseObject({
  total_before_filters: z.number().optional(),
  total_after_filters: z.number().optional(),
  signal_types_available: strings.optional(),
  date_range: z.looseObject({ earliest: z.string().nullable(), latest: z.string().nullable() }).optional(),
});
export type Coverage = z.output<typeof CoverageOut>;

export const CoverageSchema = z
  .looseObject({
    total_before_filters: optNum,
    total_after_filters: optNum,
    signal_types_available: strings.nullish(),
    date_range: z.looseObject({ earliest: optDate, latest: optDate }).nullish(),
  })
  .transform((c): Coverage => {
    const { total_before_filters, total_after_filters, signal_types_available, date_range, ...rest } = c;
    const out: Coverage = {};
    setIfPresent(out, 'total_before_filters', total_before_filters);
    setIfPresent(out, 'total_after_filters', total_after_filters);
    setIfPresent(out, 'signal_types_available', signal_types_available);
    if (date_range) {
      const { earliest, latest, ...r } = date_range;
      out.date_range = { earliest: earliest ?? null, latest: latest ?? null, ...r };
    }
    return Object.assign(out, rest);
  });

/** signal_type → count of `signals`. */
export function signalSummaryOf(signals: readonly Signal[]): Record<string, number> {
  const summary: Record<string, number> = {};
  for (const s of signals) summary[s.signal_type] = (summary[s.signal_type] ?? 0) + 1;
  return summary;
}

export const CompanyEnrichmentOut = z.looseObject({
  company: CompanyOut,
  signals: z.array(SignalOut),
  /** signal_type → count of returned signals (computed from `signals` when the service omits it). */
  signal_summary: counts,
  coverage: CoverageOut.optional(),
});
export type CompanyEnrichment = z.output<typeof CompanyEnrichmentOut>;

const enrichmentFields = {
  signals: z.array(SignalSchema).nullish(),
  signal_summary: z.record(z.string(), num).nullish(),
  coverage: CoverageSchema.nullish(),
};

/** A company's enrichment from its parsed parts (the single-company answer and each `ok` bulk item). */
function companyEnrichment(
  company: Company,
  signals: Signal[] | null | undefined,
  signalSummary: Record<string, number> | null | undefined,
  coverage: Coverage | null | undefined,
): CompanyEnrichment {
  const sigs = signals ?? [];
  const out: CompanyEnrichment = { company, signals: sigs, signal_summary: signalSummary ?? signalSummaryOf(sigs) };
  if (coverage) out.coverage = coverage;
  return out;
}

export const CompanyEnrichSchema = z
  .looseObject({ company: CompanySchema, ...enrichmentFields })
  .transform(
    ({ company, signals, signal_summary, coverage, ...rest }): CompanyEnrichment =>
      Object.assign(companyEnrichment(company, signals, signal_summary, coverage), rest),
  );

const LegacyBodySchema = z.looseObject({
  domain: z.string(),
  company: z.union([z.string(), z.looseObject({ name: optString })]).nullish(),
  industry: optString,
  employee_count: optNum,
  funding: z.looseObject({}).nullish(),
  signals: z
    .array(
      z.looseObject({
        type: z.string(),
        subtype: optString,
        id: id.nullish(),
        date: optDate,
        detected_at: optDate,
        summary: optString,
        title: optString,
      }),
    )
    .nullish(),
  signal_count: optNum,
  last_updated: optDate,
});

export const LegacyCompanyEnrichmentOut = CompanyEnrichmentOut.extend({
  /** The older GET body, as sent (spec 4.1). */
  legacy: z.looseObject({ domain: z.string() }),
});
export type LegacyCompanyEnrichment = z.output<typeof LegacyCompanyEnrichmentOut>;

/**
 * The older `GET /v1/companies/enrich?domain=` body mapped onto the company enrichment result: `company` (a name)
 * → `company.name`, `industry` → `company.industries`, `employee_count` and `funding` kept on `company`; each
 * `{ type, subtype, id, date, summary }` becomes a signal (`signal_id` = `id`, or `legacy:<domain>:<index>` when
 * absent); coverage is computed from the returned signals and `signal_count`. The body as sent is kept in `legacy`.
 */
export const LegacyEnrichSchema = z.unknown().transform((raw, ctx): LegacyCompanyEnrichment => {
  const parsed = LegacyBodySchema.safeParse(raw);
  if (!parsed.success) {
    for (const { path, message } of parsed.error.issues) ctx.issues.push({ code: 'custom', path, message, input: raw });
    return z.NEVER;
  }
  const x = parsed.data;
  const domain = normalizeDomain(x.domain);
  const name = typeof x.company === 'string' ? x.company : (x.company?.name ?? '');
  const company: Company = { name, domain };
  if (x.industry) company.industries = [x.industry];
  setIfPresent(company, 'employee_count', x.employee_count);
  setIfPresent(company, 'funding', x.funding);
  const signals: Signal[] = [];
  for (const [i, s] of (x.signals ?? []).entries()) {
    const { type, subtype, id, date, detected_at, summary, title, ...data } = s;
    const when = date ?? detected_at ?? x.last_updated;
    if (when === null || when === undefined) {
      ctx.issues.push({ code: 'custom', message: 'no date', path: ['signals', i], input: s });
      return z.NEVER;
    }
    const signalData = { summary: summary ?? '', ...data };
    signals.push(
      signalOf(id ?? `legacy:${domain}:${i}`, type, subtype, title, when, 'company', { name, domain }, signalData),
    );
  }
  const times = signals.map((s) => s.detected_at).sort();
  const coverage: Coverage = {
    total_before_filters: x.signal_count ?? signals.length,
    total_after_filters: signals.length,
    signal_types_available: [...new Set(signals.map((s) => s.signal_type))],
    date_range: { earliest: times[0] ?? null, latest: times[times.length - 1] ?? null },
  };
  return {
    company,
    signals,
    signal_summary: signalSummaryOf(signals),
    coverage,
    legacy: raw as LegacyCompanyEnrichment['legacy'],
  };
});

/** A contact's fields as the service sends them, all strings. */
const CONTACT_FIELDS = [
  'first_name',
  'last_name',
  'full_name',
  'email',
  'job_title',
  'linkedin_url',
  'city',
  'state',
  'country',
] as const;

export const ContactOut = z.looseObject({
  ...fields(CONTACT_FIELDS, z.string().optional()),
  linkedin_url_absolute: z.string().optional(),
});
export type Contact = z.output<typeof ContactOut>;

export const ContactSchema = z
  .looseObject(fields(CONTACT_FIELDS, optString))
  .transform(({ linkedin_url, ...sent }): Contact => {
    const out: Contact = {};
    copyPresent(out, sent);
    withLinkedin(out, linkedin_url);
    return out;
  });

export const ContactEnrichmentOut = z.looseObject({
  contact: ContactOut,
  /** The resolved employer. */
  company: CompanyOut.optional(),
  contact_signals: z.array(SignalOut),
  signal_summary: counts,
  total: z.number(),
  coverage: CoverageOut.optional(),
});
export type ContactEnrichment = z.output<typeof ContactEnrichmentOut>;

export const ContactEnrichSchema = z
  .looseObject({
    contact: ContactSchema,
    company: CompanySchema.nullish(),
    contact_signals: z.array(SignalSchema).nullish(),
    signal_summary: z.record(z.string(), num).nullish(),
    total: optNum,
    coverage: CoverageSchema.nullish(),
  })
  .transform((x): ContactEnrichment => {
    const { contact, company, contact_signals, signal_summary, total, coverage, ...rest } = x;
    const sigs = contact_signals ?? [];
    const out: ContactEnrichment = {
      contact,
      contact_signals: sigs,
      signal_summary: signal_summary ?? signalSummaryOf(sigs),
      total: total ?? sigs.length,
    };
    if (company) out.company = company;
    if (coverage) out.coverage = coverage;
    return Object.assign(out, rest);
  });

// ─── bulk enrich (sandbox README: spec 4.2 shapes) ───────────────────────────────────────────────────────────

export const BulkEnrichOkOut = CompanyEnrichmentOut.extend({ domain: z.string(), status: z.literal('ok') });
export const BulkEnrichNotFoundOut = z.looseObject({ domain: z.string(), status: z.literal('not_found') });
const ItemErrorOut = z.looseObject({ code: z.string(), message: z.string() });
export const BulkEnrichFailedOut = z.looseObject({
  domain: z.string(),
  status: z.literal('error'),
  error: ItemErrorOut,
});
export const BulkEnrichItemOut = z.discriminatedUnion('status', [
  BulkEnrichOkOut,
  BulkEnrichNotFoundOut,
  BulkEnrichFailedOut,
]);
export type BulkEnrichOk = z.output<typeof BulkEnrichOkOut>;
export type BulkEnrichNotFound = z.output<typeof BulkEnrichNotFoundOut>;
export type BulkEnrichFailed = z.output<typeof BulkEnrichFailedOut>;
export type BulkEnrichItem = z.output<typeof BulkEnrichItemOut>;

export const BulkEnrichSummaryOut = z.looseObject({
  requested: z.number(),
  ok: z.number(),
  not_found: z.number(),
  error: z.number(),
  signals: z.number(),
});
export type BulkEnrichSummary = z.output<typeof BulkEnrichSummaryOut>;

export const BulkEnrichOut = z.looseObject({ results: z.array(BulkEnrichItemOut), summary: BulkEnrichSummaryOut });
export type BulkEnrichBody = z.output<typeof BulkEnrichOut>;

export const BulkEnrichItemSchema = z
  .looseObject({
    domain: z.string(),
    status: optString,
    company: CompanySchema.nullish(),
    ...enrichmentFields,
    error: z.union([z.looseObject({ code: optString, message: optString }), z.string()]).nullish(),
  })
  .transform((item): BulkEnrichItem => {
    const { domain: rawDomain, status: rawStatus, company, signals, signal_summary, coverage, error, ...rest } = item;
    const domain = normalizeDomain(rawDomain);
    const status = rawStatus ?? (company || signals ? 'ok' : error ? 'error' : 'not_found');
    if (status === 'ok') {
      const enriched = companyEnrichment(company ?? { name: '', domain }, signals, signal_summary, coverage);
      return { ...rest, domain, status: 'ok', ...enriched };
    }
    if (status === 'not_found') return { ...rest, domain, status: 'not_found' };
    const err =
      typeof error === 'string'
        ? { code: 'error', message: error }
        : {
            ...(error ?? {}),
            code: error?.code ?? (status === 'error' ? 'error' : status),
            message: error?.message ?? '',
          };
    return { ...rest, domain, status: 'error', error: err };
  });

/** `POST /v1/companies/enrich/bulk`: one result per domain, and a summary (counted when the service sent none). */
export const BulkEnrichSchema = z
  .looseObject({
    results: z.array(BulkEnrichItemSchema),
    summary: z
      .looseObject({ requested: optNum, ok: optNum, not_found: optNum, error: optNum, signals: optNum })
      .nullish(),
  })
  .transform(({ results, summary }): BulkEnrichBody => {
    const count = (s: BulkEnrichItem['status']) => results.filter((r) => r.status === s).length;
    const signals = results.reduce((n, r) => n + (r.status === 'ok' ? r.signals.length : 0), 0);
    const s = summary ?? {};
    return {
      results,
      summary: {
        ...s,
        requested: s.requested ?? results.length,
        ok: s.ok ?? count('ok'),
        not_found: s.not_found ?? count('not_found'),
        error: s.error ?? count('error'),
        signals: s.signals ?? signals,
      },
    };
  });

// ─── search (spec 4.4, 4.5) ──────────────────────────────────────────────────────────────────────────────────

/** What every search hit carries beside its subject: how many signals matched, and when the latest was detected. */
const searchHitIn = { signal_count: optNum, latest_signal_at: optDate };
const searchHitOut = { signal_count: z.number(), latest_signal_at: z.string().optional() };

export const CompanySearchItemOut = z.looseObject({
  name: z.string(),
  domain: z.string(),
  ...searchHitOut,
  industries: strings.optional(),
});
export type CompanySearchItem = z.output<typeof CompanySearchItemOut>;
export const CompanySearchOut = z.looseObject({ companies: z.array(CompanySearchItemOut), count: z.number() });
export type CompanySearchBody = z.output<typeof CompanySearchOut>;

const CompanySearchItemSchema = z
  .looseObject({ name: optString, domain: z.string(), ...searchHitIn, industries: strings.nullish() })
  .transform(({ name, domain, signal_count, latest_signal_at, industries, ...rest }): CompanySearchItem => {
    const out: CompanySearchItem = {
      name: name ?? '',
      domain: normalizeDomain(domain),
      signal_count: signal_count ?? 0,
    };
    setIfPresent(out, 'latest_signal_at', latest_signal_at);
    setIfPresent(out, 'industries', industries);
    return Object.assign(out, rest);
  });

export const CompanySearchSchema = countedList('companies', CompanySearchItemSchema);

export const ContactSearchItemOut = z.looseObject({
  contact: ContactOut,
  company: CompanyOut.optional(),
  ...searchHitOut,
});
export type ContactSearchItem = z.output<typeof ContactSearchItemOut>;
export const ContactSearchOut = z.looseObject({ contacts: z.array(ContactSearchItemOut), count: z.number() });
export type ContactSearchBody = z.output<typeof ContactSearchOut>;

const ContactSearchItemSchema = z
  .looseObject({ contact: ContactSchema, company: CompanySchema.nullish(), ...searchHitIn })
  .transform(({ contact, company, signal_count, latest_signal_at, ...rest }): ContactSearchItem => {
    const out: ContactSearchItem = { contact, signal_count: signal_count ?? 0 };
    if (company) out.company = company;
    setIfPresent(out, 'latest_signal_at', latest_signal_at);
    return Object.assign(out, rest);
  });

export const ContactSearchSchema = countedList('contacts', ContactSearchItemSchema);

// ─── lookups (spec 4.6 to 4.8) ───────────────────────────────────────────────────────────────────────────────

export const SignalTypeInfoOut = z.looseObject({
  signal_type: z.string(),
  category: z.string().optional(),
  description: z.string().optional(),
  subtypes: strings,
  signal_count: z.number().optional(),
});
export const SignalTypesOut = z.looseObject({ types: z.array(SignalTypeInfoOut) });
export type SignalTypeInfo = z.output<typeof SignalTypeInfoOut>;
export type SignalTypesBody = z.output<typeof SignalTypesOut>;

const SignalTypeSchema = z
  .looseObject({
    signal_type: z.string(),
    category: optString,
    description: optString,
    subtypes: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).nullish(),
    signal_count: optNum,
  })
  .transform(({ signal_type, category, description, subtypes, signal_count, ...rest }): SignalTypeInfo => {
    const out: SignalTypeInfo = {
      signal_type,
      subtypes: (subtypes ?? []).map((s) => (typeof s === 'string' ? s : s.name)),
    };
    setIfPresent(out, 'category', category);
    setIfPresent(out, 'description', description);
    setIfPresent(out, 'signal_count', signal_count);
    return Object.assign(out, rest);
  });

/** `{ types: [...] }`, or a bare array of types. */
export const SignalTypesSchema = listOrBareArray('types', SignalTypeSchema);

export const StatsOut = z.looseObject({
  total_signals: z.number().optional(),
  total_companies: z.number().optional(),
  by_type: counts.optional(),
  freshness: z
    .looseObject({ latest_detected_at: z.string().optional(), median_age_hours: z.number().optional() })
    .optional(),
  generated_at: z.string().optional(),
});
export type StatsBody = z.output<typeof StatsOut>;

export const StatsSchema = z
  .looseObject({
    total_signals: optNum,
    total_companies: optNum,
    by_type: z.record(z.string(), num).nullish(),
    freshness: z.looseObject({ latest_detected_at: optDate, median_age_hours: optNum }).nullish(),
    generated_at: optDate,
  })
  .transform(({ freshness, generated_at, ...rest }): StatsBody => {
    const out: StatsBody = {};
    copyPresent(out, rest);
    if (freshness) {
      const { latest_detected_at, ...f } = freshness;
      const fresh: Record<string, unknown> = { ...f };
      setIfPresent(fresh, 'latest_detected_at', latest_detected_at);
      out['freshness'] = fresh;
    }
    setIfPresent(out, 'generated_at', generated_at);
    return out;
  });

// ─── buyer intent (spec 2.7, 4.9 to 4.11) ────────────────────────────────────────────────────────────────────

export const IntentContactOut = z.looseObject({
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  email: z.string().nullable().optional(),
  /** e.g. `Valid (Esp)`; null when not validated. */
  email_validation_status: z.string().nullable(),
  job_title: z.string().optional(),
  linkedin_url: z.string().optional(),
  linkedin_url_absolute: z.string().optional(),
});
export const IntentCompanyOut = z.looseObject({
  name: z.string().optional(),
  domain: z.string().optional(),
  industry: z.string().nullable().optional(),
});
export const BuyerIntentContactOut = z.looseObject({
  /** `b2b_<number>`. */
  topic_id: z.string(),
  intent_score: z.number(),
  contact: IntentContactOut,
  company: IntentCompanyOut,
});
export type IntentContact = z.output<typeof IntentContactOut>;
export type IntentCompany = z.output<typeof IntentCompanyOut>;
export type BuyerIntentContact = z.output<typeof BuyerIntentContactOut>;

export const BuyerIntentContactSchema = z
  .looseObject({
    topic_id: z.string(),
    intent_score: num,
    contact: z.looseObject(
      fields(['first_name', 'last_name', 'email', 'email_validation_status', 'job_title', 'linkedin_url'], optString),
    ),
    company: z.looseObject({ name: optString, domain: optString, industry: optString }).nullish(),
  })
  .transform(({ topic_id, intent_score, contact, company, ...rest }): BuyerIntentContact => {
    const { email_validation_status, linkedin_url, ...c } = contact;
    const outContact: IntentContact = { email_validation_status: email_validation_status ?? null };
    copyPresent(outContact, c);
    if (c.email === null) outContact.email = null;
    withLinkedin(outContact, linkedin_url);
    const outCompany: IntentCompany = {};
    copyPresent(outCompany, company ?? {});
    if (company?.domain) outCompany.domain = normalizeDomain(company.domain);
    if (company?.industry === null) outCompany.industry = null;
    return Object.assign({ topic_id, intent_score, contact: outContact, company: outCompany }, rest);
  });

const cursor = z.union([z.string(), z.number()]).nullish();

export const BuyerIntentContactsOut = z.looseObject({
  contacts: z.array(BuyerIntentContactOut),
  count: z.number(),
  page_size: z.number(),
  /** null on the last page. */
  next_cursor: z.string().nullable(),
});
export type BuyerIntentContactsBody = z.output<typeof BuyerIntentContactsOut>;

/** One page; a `page_size` the service left out is the one asked for (the client puts it in), else the count. */
export const BuyerIntentPageSchema = z
  .looseObject({
    contacts: z.array(BuyerIntentContactSchema),
    count: optNum,
    page_size: optNum,
    next_cursor: cursor,
  })
  .transform(
    ({ contacts, count, page_size, next_cursor, ...rest }): BuyerIntentContactsBody => ({
      contacts,
      count: count ?? contacts.length,
      page_size: page_size ?? contacts.length,
      next_cursor: cursorOf(next_cursor),
      ...rest,
    }),
  );

export const TopicOut = z.looseObject({ topic_id: z.string(), name: z.string(), category: z.string().optional() });
export const TopicsOut = z.looseObject({ topics: z.array(TopicOut), next_cursor: z.string().nullable() });
export type Topic = z.output<typeof TopicOut>;
export type TopicsBody = z.output<typeof TopicsOut>;

export const TopicsPageSchema = z
  .looseObject({
    topics: z.array(
      z
        .looseObject({ topic_id: z.string(), name: optString, category: optString })
        .transform(({ topic_id, name, category, ...rest }): Topic => {
          const out: Topic = { topic_id, name: name ?? '' };
          setIfPresent(out, 'category', category);
          return Object.assign(out, rest);
        }),
    ),
    next_cursor: cursor,
  })
  .transform(
    ({ topics, next_cursor, ...rest }): TopicsBody => ({ topics, next_cursor: cursorOf(next_cursor), ...rest }),
  );

export const IntentExportOut = z.looseObject({
  export_id: z.string(),
  /**
   * `queued`, `running`, `ready`, `failed`, `expired`, or what else the service says; absent when the answer had
   * none (the spec shows neither the submit's nor the poll's body).
   */
  status: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  row_count: z.number().optional(),
  /** Signed, expiring link to the JSONL file; present when `status` is `ready`. */
  download_url: z.string().optional(),
  expires_at: z.string().optional(),
  error: ItemErrorOut.optional(),
});
export type IntentExport = z.output<typeof IntentExportOut>;

/** An export job as submitted or polled; `id` is read as `export_id` when that is missing. */
export const IntentExportSchema = z
  .looseObject({
    export_id: id.optional(),
    id: id.optional(),
    // The spec shows no submit or poll body: only the id is required, so a paid export is never lost to its shape.
    status: optString,
    created_at: optDate,
    updated_at: optDate,
    row_count: optNum,
    download_url: optString,
    expires_at: optDate,
    error: z.union([z.looseObject({ code: optString, message: optString }), z.string()]).nullish(),
  })
  .transform((x, ctx): IntentExport => {
    const { export_id, id, status, created_at, updated_at, row_count, download_url, expires_at, error, ...rest } = x;
    const exportId = export_id ?? id;
    if (exportId === undefined) return missing(ctx, 'export_id', x);
    const out: IntentExport = { export_id: exportId };
    copyPresent(out, { status, created_at, updated_at, row_count, download_url, expires_at });
    if (error) {
      out.error =
        typeof error === 'string'
          ? { code: 'export_failed', message: error }
          : { ...error, code: error.code ?? 'export_failed', message: error.message ?? '' };
    }
    if (id !== undefined && export_id !== undefined) out['id'] = id;
    return Object.assign(out, rest);
  });

// ─── email verification (spec 2.8, 4.12, 4.13) ───────────────────────────────────────────────────────────────

/** The yes/no facts a verification's `details` may carry. */
const EMAIL_FLAGS = ['is_free_provider', 'is_disposable', 'is_role_account', 'is_catch_all', 'has_mx_record'] as const;
/** What a verification's `result` may be (the service may send others). */
const VERIFY_RESULTS = ['deliverable', 'undeliverable', 'risky', 'unknown'] as const;

export const EmailVerificationOut = z.looseObject({
  email: z.string(),
  /** `deliverable`, `undeliverable`, `risky`, `unknown`, or what else the service says. */
  result: z.string(),
  confidence: z.number(),
  reason: z.string().optional(),
  risk_level: z.string().optional(),
  details: z.looseObject({
    ...fields(EMAIL_FLAGS, z.boolean().optional()),
    email_provider: z.string().optional(),
    domain_age_days: z.number().optional(),
    suggested_correction: z.string().nullable().optional(),
  }),
  validated_at: z.string().optional(),
});
export type EmailVerification = z.output<typeof EmailVerificationOut>;
export type EmailVerificationDetails = EmailVerification['details'];

export const EmailVerificationSchema = z
  .looseObject({
    email: z.string(),
    result: z.string(),
    confidence: optNum,
    reason: optString,
    risk_level: optString,
    details: z
      .looseObject({
        ...fields(EMAIL_FLAGS, z.boolean().nullish()),
        email_provider: optString,
        domain_age_days: optNum,
        suggested_correction: optString,
      })
      .nullish(),
    validated_at: optDate,
  })
  .transform(({ email, result, confidence, reason, risk_level, details, validated_at, ...rest }): EmailVerification => {
    const out: EmailVerification = { email, result, confidence: confidence ?? 0, details: {} };
    setIfPresent(out, 'reason', reason);
    setIfPresent(out, 'risk_level', risk_level);
    if (details) {
      for (const [k, v] of Object.entries(details)) {
        if (v !== undefined && (v !== null || k === 'suggested_correction')) out.details[k] = v;
      }
    }
    setIfPresent(out, 'validated_at', validated_at);
    return Object.assign(out, rest);
  });

export const VerifyEmailOut = z.looseObject({ result: EmailVerificationOut });
export type VerifyEmailBody = z.output<typeof VerifyEmailOut>;

/** `{ result: <verification> }` (spec 4.12), or the verification itself. */
export const VerifyEmailSchema = z.union([
  z.looseObject({ result: EmailVerificationSchema }),
  EmailVerificationSchema.transform((result): VerifyEmailBody => ({ result })),
]);

export const BulkVerifyErrorOut = z.looseObject({
  email: z.string().optional(),
  code: z.string(),
  message: z.string().optional(),
});
export const BulkVerifySummaryOut = z.looseObject({ total: z.number(), ...fields(VERIFY_RESULTS, z.number()) });
export const VerifyEmailsOut = z.looseObject({
  verifications: z.array(EmailVerificationOut),
  summary: BulkVerifySummaryOut,
  errors: z.array(BulkVerifyErrorOut),
  validated_at: z.string().optional(),
});
export type BulkVerifyError = z.output<typeof BulkVerifyErrorOut>;
export type BulkVerifySummary = z.output<typeof BulkVerifySummaryOut>;
export type VerifyEmailsBody = z.output<typeof VerifyEmailsOut>;

export const VerifyEmailsSchema = z
  .looseObject({
    verifications: z.array(EmailVerificationSchema),
    summary: z.looseObject({ total: optNum, ...fields(VERIFY_RESULTS, optNum) }).nullish(),
    errors: z
      .array(
        z.union([
          z.looseObject({ email: optString, code: optString, message: optString }),
          z.string().transform((message) => ({ message })),
        ]),
      )
      .nullish(),
    validated_at: optDate,
  })
  .transform(({ verifications, summary, errors, validated_at, ...rest }): VerifyEmailsBody => {
    const counted: Record<string, number> = { total: verifications.length };
    for (const r of VERIFY_RESULTS) counted[r] = verifications.filter((v) => v.result === r).length;
    const out = {
      verifications,
      summary: withCounted(summary ?? {}, counted),
      errors: (errors ?? []).map((e) => {
        const err: BulkVerifyError = { code: 'error' };
        copyPresent(err, e);
        return err;
      }),
      ...rest,
    } as VerifyEmailsBody;
    setIfPresent(out, 'validated_at', validated_at);
    return out;
  });

// ─── webhooks (spec 6; paths from the sandbox README) ────────────────────────────────────────────────────────

export const WebhookOut = z.looseObject({
  webhook_id: z.string(),
  url: z.string(),
  signal_types: strings,
  description: z.string().nullable().optional(),
  /** `active`, `paused`, or what else the service says. */
  status: z.string(),
  /** Signing secret (`whsec_...`); only in the answer to `createWebhook`. */
  secret: z.string().optional(),
  created_at: z.string().optional(),
});
export type Webhook = z.output<typeof WebhookOut>;

export const WebhookSchema = z
  .looseObject({
    webhook_id: id.optional(),
    id: id.optional(),
    url: z.string(),
    signal_types: strings.nullish(),
    description: optString,
    status: optString,
    secret: optString,
    created_at: optDate,
  })
  .transform((x, ctx): Webhook => {
    const { webhook_id, id, url, signal_types, description, status, secret, created_at, ...rest } = x;
    const webhookId = webhook_id ?? id;
    if (webhookId === undefined) return missing(ctx, 'webhook_id', x);
    const out: Webhook = { webhook_id: webhookId, url, signal_types: signal_types ?? [], status: status ?? 'active' };
    if (description !== undefined) out.description = description;
    setIfPresent(out, 'secret', secret);
    setIfPresent(out, 'created_at', created_at);
    if (id !== undefined && webhook_id !== undefined) out['id'] = id;
    return Object.assign(out, rest);
  });

export const WebhookListOut = z.looseObject({ webhooks: z.array(WebhookOut) });
export type WebhookListBody = z.output<typeof WebhookListOut>;

/** `{ webhooks: [...] }`, or a bare array. */
export const WebhookListSchema = listOrBareArray('webhooks', WebhookSchema);

export const WebhookDeleteOut = z.looseObject({ webhook_id: z.string(), deleted: z.boolean() });
export type WebhookDeleteBody = z.output<typeof WebhookDeleteOut>;

/** A deletion's answer; `webhook_id` is missing when the service sent neither it nor `id` (the client adds it). */
export const WebhookDeleteSchema = z
  .looseObject({ webhook_id: id.optional(), id: id.optional(), deleted: z.boolean().nullish() })
  .transform(({ webhook_id, id, deleted, ...rest }) => ({
    ...rest,
    webhook_id: webhook_id ?? id,
    deleted: deleted ?? true,
  }));

export const WebhookTestOut = z.looseObject({
  delivered: z.boolean(),
  status_code: z.number().nullable().optional(),
  attempts: z.number().optional(),
});
export type WebhookTestBody = z.output<typeof WebhookTestOut>;

export const WebhookTestSchema = z
  .looseObject({ delivered: z.boolean(), status_code: optNum, attempts: optNum })
  .transform(({ delivered, status_code, attempts, ...rest }): WebhookTestBody => {
    const out: WebhookTestBody = { delivered };
    if (status_code !== undefined) out.status_code = status_code;
    setIfPresent(out, 'attempts', attempts);
    return Object.assign(out, rest);
  });

// ─── errors ──────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Error bodies in the forms seen in the wild: `{ error: { code, message, field, request_id } }` (the sandbox's),
 * `{ error: "message" }`, `{ code, message }`, `{ detail }`, `{ errors: [{ message, field }] }`.
 */
export const ErrorBodySchema = z.looseObject({
  error: z
    .union([
      z.string(),
      z.looseObject({
        code: z.union([z.string(), z.number()]).nullish(),
        message: optString,
        field: optString,
        request_id: optString,
      }),
    ])
    .nullish(),
  code: z.union([z.string(), z.number()]).nullish(),
  message: optString,
  detail: z.unknown().optional(),
  field: optString,
  request_id: optString,
  errors: z.array(z.unknown()).nullish(),
});
export type ErrorBody = z.output<typeof ErrorBodySchema>;
