/** Company endpoints: enrich (POST and the older GET form), bulk enrich, search (spec 4.1, 4.2, 4.4). */
import { z } from 'zod';
import type { ApiRequest, Route } from '../api.ts';
import { isValidDomain, legacyFunding, normalizeDomain, resolveCompany } from '../data/companies.ts';
import { CONTENT_FILTER_KEYS, searchCompanies } from '../data/search.ts';
import { hexToUuid, signalHex, toEnrichSignal } from '../data/signals.ts';
import { notFound, validationError } from '../errors.ts';
import type { DataStore } from '../store.ts';
import { isoOffset, isoZ } from '../time.ts';
import {
  boundedInt,
  dateTime,
  enrichLimit,
  lowerSet,
  parse,
  queryInt,
  queryObject,
  signalSubtypes,
  signalTypes,
} from '../validation.ts';
import { coverageOf, filterOf, searchParamsOf, summaryOf } from './common.ts';

export const DEFAULT_ENRICH_LIMIT = 100;

const enrichFilters = {
  signal_types: signalTypes.optional(),
  signal_subtypes: signalSubtypes.optional(),
  detected_after: dateTime.optional(),
  limit: enrichLimit.optional(),
};

const enrichSchema = z.strictObject({
  domain: z.string().optional(),
  company_name: z.string().optional(),
  linkedin_url: z.string().optional(),
  ...enrichFilters,
});

const bulkSchema = z.strictObject({
  domains: z
    .array(z.string({ error: 'must be a string' }))
    .min(1, { error: 'at least 1 entry' })
    .max(100, { error: 'at most 100 entries' }),
  ...enrichFilters,
});

const list = z.array(z.string()).max(50, { error: 'at most 50 entries' });

type ContentFilterShape = Record<(typeof CONTENT_FILTER_KEYS)[number], z.ZodOptional<typeof list>>;

const searchSchema = z.strictObject({
  signal_types: signalTypes.optional(),
  detected_after: dateTime.optional(),
  limit: boundedInt(1, 100).optional(),
  industries: list.optional(),
  employee_count_min: boundedInt(0, 10_000_000).optional(),
  employee_count_max: boundedInt(0, 10_000_000).optional(),
  content_filters: z
    .strictObject(Object.fromEntries(CONTENT_FILTER_KEYS.map((key) => [key, list.optional()])) as ContentFilterShape)
    .optional(),
});

/** One company's enrich result (spec 2.3) and its cost, or null when the domain resolves to nothing. */
function enrichOne(store: DataStore, domain: string, body: z.infer<typeof enrichSchema>, now: number) {
  const profile = resolveCompany(store.seed, domain);
  if (!profile) return null;
  const result = store.signalsOf(profile, filterOf(body), body.limit ?? DEFAULT_ENRICH_LIMIT, now);
  if (result.records.length > 0) store.remember(profile);
  return {
    credits: 2 * result.records.length,
    body: {
      company: profile.company,
      signals: result.records.map(toEnrichSignal),
      signal_summary: summaryOf(result.records),
      coverage: coverageOf(result),
    },
  };
}

/** The filters of an enrich request, for the call record. */
function filterSummary(body: z.infer<typeof enrichSchema>): Record<string, unknown> {
  return {
    limit: body.limit ?? DEFAULT_ENRICH_LIMIT,
    detected_after: body.detected_after === undefined ? null : isoZ(body.detected_after),
    signal_types: body.signal_types ?? null,
    signal_subtypes: body.signal_subtypes ?? null,
  };
}

function enrich(req: ApiRequest, store: DataStore) {
  const body = parse(enrichSchema, req.body);
  let domain: string;
  if (body.domain !== undefined) {
    domain = normalizeDomain(body.domain);
    if (!isValidDomain(domain)) throw validationError('domain', 'not a valid domain name');
  } else if (body.linkedin_url !== undefined) {
    const p = store.companyByLinkedin(body.linkedin_url);
    if (p === undefined) throw validationError('linkedin_url', 'not a LinkedIn company URL (.../company/<slug>)');
    if (p === null) throw notFound(`no company found for ${body.linkedin_url}`);
    domain = p.domain;
  } else if (body.company_name !== undefined) {
    if (body.company_name.trim() === '') throw validationError('company_name', 'must not be empty');
    const p = store.companyByName(body.company_name);
    if (!p) throw notFound(`no company found for ${body.company_name}`);
    domain = p.domain;
  } else {
    throw validationError('domain', 'one of domain, company_name, linkedin_url is required');
  }
  const out = enrichOne(store, domain, body, req.now);
  if (!out) throw notFound(`no company found for ${domain}`);
  req.charge(out.credits);
  req.note({ domain, ...filterSummary(body) }, { signals: out.body.signals.length });
  return { body: out.body };
}

const legacyQuery = z.strictObject({ domain: z.string(), limit: queryInt(1, 500).optional() });

function enrichLegacy(req: ApiRequest, store: DataStore) {
  const q = parse(legacyQuery, queryObject(req.query));
  const domain = normalizeDomain(q.domain);
  if (!isValidDomain(domain)) throw validationError('domain', 'not a valid domain name');
  const profile = resolveCompany(store.seed, domain);
  if (!profile) throw notFound(`no company found for ${domain}`);
  const result = store.signalsOf(profile, {}, q.limit ?? DEFAULT_ENRICH_LIMIT, req.now);
  if (result.records.length > 0) store.remember(profile);
  req.charge(2 * result.records.length);
  const co = profile.company;
  return {
    body: {
      domain,
      company: co.name,
      industry: co.industries?.[0] ?? null,
      employee_count:
        co.employee_count_low !== undefined && co.employee_count_high !== undefined
          ? Math.round((co.employee_count_low + co.employee_count_high) / 2)
          : null,
      funding: legacyFunding(store.seed, profile),
      signals: result.records.map((r) => ({
        type: r.info.type,
        subtype: r.subtype,
        date: isoZ(r.t),
        summary: String(r.data['summary']),
        id: `sig_${r.hex}`,
      })),
      signal_count: result.records.length,
      last_updated: result.latest === undefined ? null : isoZ(result.latest),
    },
  };
}

function enrichBulk(req: ApiRequest, store: DataStore) {
  const body = parse(bulkSchema, req.body);
  const seen = new Set<string>();
  const results: unknown[] = [];
  const summary = { requested: 0, ok: 0, not_found: 0, error: 0, signals: 0 };
  const signalsPerDomain: Record<string, number> = {};
  let credits = 0;
  for (const raw of body.domains) {
    const key = raw.trim().toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    summary.requested++;
    const domain = normalizeDomain(raw);
    if (!isValidDomain(domain)) {
      summary.error++;
      results.push({
        domain: raw,
        status: 'error',
        error: { code: 'invalid_domain', message: `${JSON.stringify(raw)} is not a valid domain name` },
      });
      continue;
    }
    const out = enrichOne(store, domain, body, req.now);
    if (!out) {
      summary.not_found++;
      results.push({ domain: raw, status: 'not_found' });
      continue;
    }
    summary.ok++;
    summary.signals += out.body.signals.length;
    signalsPerDomain[domain] = out.body.signals.length;
    credits += out.credits;
    results.push({ domain: raw, status: 'ok', ...out.body });
  }
  req.charge(credits);
  req.note({ domains: [...seen], ...filterSummary(body) }, { ...summary, signalsPerDomain });
  return { body: { results, summary } };
}

/** The hits of a company search body (422 for a bad one), the `limit` newest; the oracle asks for all of them. */
export function companySearchHits(store: DataStore, rawBody: unknown, now: number, all = false) {
  const body = parse(searchSchema, rawBody);
  if (
    body.employee_count_min !== undefined &&
    body.employee_count_max !== undefined &&
    body.employee_count_min > body.employee_count_max
  ) {
    throw validationError('employee_count_min', 'must not exceed employee_count_max');
  }
  const params: Parameters<typeof searchCompanies>[1] = searchParamsOf(body);
  if (all) params.limit = Number.POSITIVE_INFINITY;
  const industries = lowerSet(body.industries);
  if (industries) params.industries = industries;
  if (body.employee_count_min !== undefined) params.employeeMin = body.employee_count_min;
  if (body.employee_count_max !== undefined) params.employeeMax = body.employee_count_max;
  if (body.content_filters) params.content = body.content_filters;
  return searchCompanies(store, params, now).map((h) => ({
    name: h.profile.company.name,
    domain: h.profile.domain,
    signal_count: h.count,
    latest_signal_at: isoOffset(h.latest),
    latest_signal_id: hexToUuid(signalHex(h.profile, h.latestIndex)),
    industries: h.profile.company.industries ?? [],
  }));
}

function search(req: ApiRequest, store: DataStore) {
  const companies = companySearchHits(store, req.body, req.now);
  req.charge(companies.length);
  req.note({ body: req.body }, { count: companies.length });
  return { body: { companies, count: companies.length } };
}

export const companyRoutes: Route[] = [
  { method: 'POST', path: '/v1/companies/enrich', handler: (req, ctx) => enrich(req, ctx.store) },
  { method: 'GET', path: '/v1/companies/enrich', handler: (req, ctx) => enrichLegacy(req, ctx.store) },
  { method: 'POST', path: '/v1/companies/enrich/bulk', handler: (req, ctx) => enrichBulk(req, ctx.store) },
  { method: 'POST', path: '/v1/companies/search', handler: (req, ctx) => search(req, ctx.store) },
];
