/**
 * Strict output: turns the tolerant parses of `schemas.ts` into the one normalized form the kit writes.
 *
 * - timestamps: ISO 8601 UTC with `Z` and milliseconds (`2026-03-01T12:00:00.000Z`), whatever offset came in;
 *   a timestamp without an offset is read as UTC (the spec says all times are UTC);
 * - domains: trimmed, lower case;
 * - `signal_name`: `data.summary` when the service sent an empty one;
 * - `linkedin_url`: kept as sent, plus `linkedin_url_absolute` (`https://www.linkedin.com` + a relative path);
 * - optional company fields: absent when unknown (null is dropped), except `description`, which may be null;
 * - unknown fields: kept as sent. Type-specific `data` is kept as sent.
 */
import { absoluteLinkedinUrl, normalizeDomain, toIsoUtc } from './scalars.ts';
import type {
  BulkEnrichIn,
  BuyerIntentContactIn,
  BuyerIntentPageIn,
  CompanyEnrichIn,
  CompanyIn,
  CompanySearchIn,
  ContactEnrichIn,
  ContactIn,
  ContactSearchIn,
  CoverageIn,
  EmailVerificationIn,
  IntentExportIn,
  LegacyEnrichIn,
  SignalIn,
  SignalTypesIn,
  StatsIn,
  TopicsPageIn,
  VerifyEmailsIn,
  WebhookIn,
} from './schemas.ts';
import type {
  BulkEnrichBody,
  BulkEnrichItem,
  BulkEnrichSummary,
  BulkVerifyError,
  BuyerIntentContact,
  BuyerIntentContactsBody,
  Company,
  CompanyEnrichment,
  CompanySearchBody,
  CompanySearchItem,
  Contact,
  ContactEnrichment,
  ContactSearchBody,
  ContactSearchItem,
  Coverage,
  EmailVerification,
  IntentExport,
  LegacyCompanyEnrichBody,
  Signal,
  SignalTypeInfo,
  SignalTypesBody,
  StatsBody,
  Topic,
  TopicsBody,
  VerifyEmailsBody,
  Webhook,
} from './types.ts';

// ─── helpers ─────────────────────────────────────────────────────────────────────────────────────────────────

function isoOrNull(value: string | number | null | undefined): string | null {
  return value === null || value === undefined ? null : toIsoUtc(value);
}

function setIfPresent<T extends object, K extends string>(target: T, key: K, value: unknown): void {
  if (value !== null && value !== undefined) (target as Record<string, unknown>)[key] = value;
}

function withLinkedin<T extends object>(target: T, url: string | null | undefined): void {
  if (url) {
    (target as Record<string, unknown>)['linkedin_url'] = url;
    (target as Record<string, unknown>)['linkedin_url_absolute'] = absoluteLinkedinUrl(url);
  }
}

function cursorOf(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  return String(value);
}

// ─── signals and companies ───────────────────────────────────────────────────────────────────────────────────

export function normalizeCompany(c: CompanyIn): Company {
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
  const out: Company = { name: name ?? '', domain: normalizeDomain(domain) };
  withLinkedin(out, linkedin_url);
  setIfPresent(out, 'industries', industries);
  setIfPresent(out, 'employee_count_low', employee_count_low);
  setIfPresent(out, 'employee_count_high', employee_count_high);
  setIfPresent(out, 'revenue', revenue === null || revenue === undefined ? revenue : String(revenue));
  if (description !== undefined) out.description = description;
  return Object.assign(out, rest);
}

export function normalizeSignal(s: SignalIn): Signal {
  const { signal_id, signal_type, signal_subtype, signal_name, detected_at, association, company, data, ...rest } = s;
  const summary = data?.summary ?? '';
  // Built once, in the conventional field order (scalars, company, data, unknown fields): this runs for every
  // signal of a bulk answer, thousands per call, so no intermediate copies.
  const out = {
    signal_id,
    signal_type,
    signal_subtype: signal_subtype ?? '',
    signal_name: signal_name && signal_name.trim() !== '' ? signal_name : summary,
    detected_at: toIsoUtc(detected_at),
  } as Signal;
  setIfPresent(out, 'association', association);
  if (company) out.company = normalizeCompany(company);
  out.data = { ...(data ?? {}), summary };
  return Object.assign(out, rest);
}

export function signalSummaryOf(signals: readonly Signal[]): Record<string, number> {
  const summary: Record<string, number> = {};
  for (const s of signals) summary[s.signal_type] = (summary[s.signal_type] ?? 0) + 1;
  return summary;
}

export function normalizeCoverage(c: CoverageIn): Coverage {
  const { total_before_filters, total_after_filters, signal_types_available, date_range, ...rest } = c;
  const out: Coverage = {};
  setIfPresent(out, 'total_before_filters', total_before_filters);
  setIfPresent(out, 'total_after_filters', total_after_filters);
  setIfPresent(out, 'signal_types_available', signal_types_available);
  if (date_range) {
    const { earliest, latest, ...r } = date_range;
    out.date_range = { earliest: isoOrNull(earliest), latest: isoOrNull(latest), ...r };
  }
  return Object.assign(out, rest);
}

export function normalizeCompanyEnrich(x: CompanyEnrichIn): CompanyEnrichment {
  const { company, signals, signal_summary, coverage, ...rest } = x;
  const sigs = (signals ?? []).map(normalizeSignal);
  const out: CompanyEnrichment = {
    company: normalizeCompany(company),
    signals: sigs,
    signal_summary: signal_summary ?? signalSummaryOf(sigs),
  };
  if (coverage) out.coverage = normalizeCoverage(coverage);
  return Object.assign(out, rest);
}

/**
 * The older GET form mapped onto the company enrichment result: `company` (a name) → `company.name`, `industry` →
 * `company.industries`, `employee_count` and `funding` kept on `company`; each `{ type, subtype, id, date, summary }`
 * becomes a signal (`signal_id` = `id`, or `legacy:<domain>:<index>` when absent); coverage is computed from the
 * returned signals and `signal_count`. The original body is kept in `legacy`.
 */
export function normalizeLegacyEnrich(
  x: LegacyEnrichIn,
  raw: unknown,
): CompanyEnrichment & { legacy: LegacyCompanyEnrichBody } {
  const domain = normalizeDomain(x.domain);
  const name = typeof x.company === 'string' ? x.company : (x.company?.name ?? '');
  const company: Company = { name, domain };
  if (x.industry) company.industries = [x.industry];
  setIfPresent(company, 'employee_count', x.employee_count);
  setIfPresent(company, 'funding', x.funding);
  const signals: Signal[] = (x.signals ?? []).map((s, i) => {
    const { type, subtype, id, date, detected_at, summary, title, ...data } = s;
    const when = date ?? detected_at ?? x.last_updated;
    if (when === null || when === undefined) throw new TypeError(`signals[${i}]: no date`);
    return {
      signal_id: id ?? `legacy:${domain}:${i}`,
      signal_type: type,
      signal_subtype: subtype ?? '',
      signal_name: title && title.trim() !== '' ? title : (summary ?? ''),
      detected_at: toIsoUtc(when),
      association: 'company',
      company: { name, domain },
      data: { summary: summary ?? '', ...data },
    };
  });
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
    legacy: raw as LegacyCompanyEnrichBody,
  };
}

export function normalizeContact(c: ContactIn): Contact {
  const { linkedin_url, ...fields } = c;
  const out: Contact = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v !== null && v !== undefined) out[k] = v;
  }
  withLinkedin(out, linkedin_url);
  return out;
}

export function normalizeContactEnrich(x: ContactEnrichIn): ContactEnrichment {
  const { contact, company, contact_signals, signal_summary, total, coverage, ...rest } = x;
  const sigs = (contact_signals ?? []).map(normalizeSignal);
  const out: ContactEnrichment = {
    contact: normalizeContact(contact),
    contact_signals: sigs,
    signal_summary: signal_summary ?? signalSummaryOf(sigs),
    total: total ?? sigs.length,
  };
  if (company) out.company = normalizeCompany(company);
  if (coverage) out.coverage = normalizeCoverage(coverage);
  return Object.assign(out, rest);
}

// ─── bulk enrich ─────────────────────────────────────────────────────────────────────────────────────────────

export function normalizeBulkEnrich(x: BulkEnrichIn): BulkEnrichBody {
  const results = x.results.map((item): BulkEnrichItem => {
    const { domain: rawDomain, status: rawStatus, company, signals, signal_summary, coverage, error, ...rest } = item;
    const domain = normalizeDomain(rawDomain);
    const status = rawStatus ?? (company || signals ? 'ok' : error ? 'error' : 'not_found');
    if (status === 'ok') {
      const enriched = normalizeCompanyEnrich({
        company: company ?? { domain },
        signals,
        signal_summary,
        coverage,
      });
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
  const count = (s: BulkEnrichItem['status']) => results.filter((r) => r.status === s).length;
  const signals = results.reduce((n, r) => n + (r.status === 'ok' ? r.signals.length : 0), 0);
  const s = x.summary ?? {};
  const summary: BulkEnrichSummary = {
    ...s,
    requested: s.requested ?? results.length,
    ok: s.ok ?? count('ok'),
    not_found: s.not_found ?? count('not_found'),
    error: s.error ?? count('error'),
    signals: s.signals ?? signals,
  };
  return { results, summary };
}

// ─── search ──────────────────────────────────────────────────────────────────────────────────────────────────

export function normalizeCompanySearch(x: CompanySearchIn): CompanySearchBody {
  const { companies, count, ...rest } = x;
  const items = companies.map((c): CompanySearchItem => {
    const { name, domain, signal_count, latest_signal_at, industries, ...r } = c;
    const out: CompanySearchItem = {
      name: name ?? '',
      domain: normalizeDomain(domain),
      signal_count: signal_count ?? 0,
    };
    if (latest_signal_at !== null && latest_signal_at !== undefined) out.latest_signal_at = toIsoUtc(latest_signal_at);
    setIfPresent(out, 'industries', industries);
    return Object.assign(out, r);
  });
  return { companies: items, count: count ?? items.length, ...rest };
}

export function normalizeContactSearch(x: ContactSearchIn): ContactSearchBody {
  const { contacts, count, ...rest } = x;
  const items = contacts.map((c): ContactSearchItem => {
    const { contact, company, signal_count, latest_signal_at, ...r } = c;
    const out: ContactSearchItem = { contact: normalizeContact(contact), signal_count: signal_count ?? 0 };
    if (company) out.company = normalizeCompany(company);
    if (latest_signal_at !== null && latest_signal_at !== undefined) out.latest_signal_at = toIsoUtc(latest_signal_at);
    return Object.assign(out, r);
  });
  return { contacts: items, count: count ?? items.length, ...rest };
}

// ─── lookups ─────────────────────────────────────────────────────────────────────────────────────────────────

export function normalizeSignalTypes(x: SignalTypesIn): SignalTypesBody {
  const { types, ...rest } = x;
  return {
    types: types.map((t): SignalTypeInfo => {
      const { signal_type, category, description, subtypes, signal_count, ...r } = t;
      const out: SignalTypeInfo = {
        signal_type,
        subtypes: (subtypes ?? []).map((s) => (typeof s === 'string' ? s : s.name)),
      };
      setIfPresent(out, 'category', category);
      setIfPresent(out, 'description', description);
      setIfPresent(out, 'signal_count', signal_count);
      return Object.assign(out, r);
    }),
    ...rest,
  };
}

export function normalizeStats(x: StatsIn): StatsBody {
  const { freshness, generated_at, ...rest } = x;
  const out: StatsBody = {};
  for (const [k, v] of Object.entries(rest)) if (v !== null && v !== undefined) out[k] = v;
  if (freshness) {
    const { latest_detected_at, ...f } = freshness;
    const fresh: Record<string, unknown> = { ...f };
    if (latest_detected_at !== null && latest_detected_at !== undefined) {
      fresh['latest_detected_at'] = toIsoUtc(latest_detected_at);
    }
    out['freshness'] = fresh;
  }
  if (generated_at !== null && generated_at !== undefined) out['generated_at'] = toIsoUtc(generated_at);
  return out;
}

// ─── buyer intent ────────────────────────────────────────────────────────────────────────────────────────────

export function normalizeBuyerIntentContact(x: BuyerIntentContactIn): BuyerIntentContact {
  const { topic_id, intent_score, contact, company, ...rest } = x;
  const { email_validation_status, linkedin_url, ...c } = contact;
  const outContact: BuyerIntentContact['contact'] = { email_validation_status: email_validation_status ?? null };
  for (const [k, v] of Object.entries(c)) if (v !== null && v !== undefined) outContact[k] = v;
  if (c.email === null) outContact.email = null;
  withLinkedin(outContact, linkedin_url);
  const outCompany: BuyerIntentContact['company'] = {};
  for (const [k, v] of Object.entries(company ?? {})) if (v !== null && v !== undefined) outCompany[k] = v;
  if (company?.domain) outCompany.domain = normalizeDomain(company.domain);
  if (company?.industry === null) outCompany.industry = null;
  return Object.assign({ topic_id, intent_score, contact: outContact, company: outCompany }, rest);
}

export function normalizeBuyerIntentPage(x: BuyerIntentPageIn, requestedPageSize?: number): BuyerIntentContactsBody {
  const { contacts, count, page_size, next_cursor, ...rest } = x;
  const items = contacts.map(normalizeBuyerIntentContact);
  return {
    contacts: items,
    count: count ?? items.length,
    page_size: page_size ?? requestedPageSize ?? items.length,
    next_cursor: cursorOf(next_cursor),
    ...rest,
  };
}

export function normalizeTopicsPage(x: TopicsPageIn): TopicsBody {
  const { topics, next_cursor, ...rest } = x;
  return {
    topics: topics.map((t): Topic => {
      const { topic_id, name, category, ...r } = t;
      const out: Topic = { topic_id, name: name ?? '' };
      setIfPresent(out, 'category', category);
      return Object.assign(out, r);
    }),
    next_cursor: cursorOf(next_cursor),
    ...rest,
  };
}

export function normalizeIntentExport(x: IntentExportIn): IntentExport {
  const { export_id, id, status, created_at, updated_at, row_count, download_url, expires_at, error, ...rest } = x;
  const exportId = export_id ?? id;
  if (exportId === undefined) throw new TypeError('export_id: missing');
  const out: IntentExport = { export_id: exportId };
  if (status !== null && status !== undefined) out.status = status;
  if (created_at !== null && created_at !== undefined) out.created_at = toIsoUtc(created_at);
  if (updated_at !== null && updated_at !== undefined) out.updated_at = toIsoUtc(updated_at);
  setIfPresent(out, 'row_count', row_count);
  setIfPresent(out, 'download_url', download_url);
  if (expires_at !== null && expires_at !== undefined) out.expires_at = toIsoUtc(expires_at);
  if (error) {
    out.error =
      typeof error === 'string'
        ? { code: 'export_failed', message: error }
        : { ...error, code: error.code ?? 'export_failed', message: error.message ?? '' };
  }
  if (id !== undefined && export_id !== undefined) out['id'] = id;
  return Object.assign(out, rest);
}

// ─── email verification ──────────────────────────────────────────────────────────────────────────────────────

export function normalizeEmailVerification(x: EmailVerificationIn): EmailVerification {
  const { email, result, confidence, reason, risk_level, details, validated_at, ...rest } = x;
  const out: EmailVerification = { email, result, confidence: confidence ?? 0, details: {} };
  setIfPresent(out, 'reason', reason);
  setIfPresent(out, 'risk_level', risk_level);
  if (details) {
    for (const [k, v] of Object.entries(details)) {
      if (v !== undefined && (v !== null || k === 'suggested_correction')) out.details[k] = v;
    }
  }
  if (validated_at !== null && validated_at !== undefined) out.validated_at = toIsoUtc(validated_at);
  return Object.assign(out, rest);
}

export function normalizeVerifyEmails(x: VerifyEmailsIn): VerifyEmailsBody {
  const { verifications, summary, errors, validated_at, ...rest } = x;
  const items = verifications.map(normalizeEmailVerification);
  const by = (r: string) => items.filter((v) => v.result === r).length;
  const s = summary ?? {};
  const out = {
    verifications: items,
    summary: {
      ...s,
      total: s.total ?? items.length,
      deliverable: s.deliverable ?? by('deliverable'),
      undeliverable: s.undeliverable ?? by('undeliverable'),
      risky: s.risky ?? by('risky'),
      unknown: s.unknown ?? by('unknown'),
    },
    errors: (errors ?? []).map((e) => {
      const out: BulkVerifyError = { code: 'error' };
      for (const [k, v] of Object.entries(e)) if (v !== null && v !== undefined) out[k] = v;
      return out;
    }),
    ...rest,
  } as VerifyEmailsBody;
  if (validated_at !== null && validated_at !== undefined) out.validated_at = toIsoUtc(validated_at);
  return out;
}

// ─── webhooks ────────────────────────────────────────────────────────────────────────────────────────────────

export function normalizeWebhook(x: WebhookIn): Webhook {
  const { webhook_id, id, url, signal_types, description, status, secret, created_at, ...rest } = x;
  const webhookId = webhook_id ?? id;
  if (webhookId === undefined) throw new TypeError('webhook_id: missing');
  const out: Webhook = { webhook_id: webhookId, url, signal_types: signal_types ?? [], status: status ?? 'active' };
  if (description !== undefined) out.description = description;
  setIfPresent(out, 'secret', secret);
  if (created_at !== null && created_at !== undefined) out.created_at = toIsoUtc(created_at);
  if (id !== undefined && webhook_id !== undefined) out['id'] = id;
  return Object.assign(out, rest);
}
