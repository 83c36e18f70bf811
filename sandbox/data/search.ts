/**
 * Searches and statistics over the catalog (spec 4.4, 4.5, 4.7, 4.8). They scan catalog timelines on each call
 * (a few milliseconds); nothing is cached.
 */
import type { DataStore } from '../store.ts';
import type { CompanyProfile } from './companies.ts';
import { type Person, personExists, personFromEmail, staffCount, staffEmail } from './contacts.ts';
import { SIGNAL_TYPES, SOCIAL_TYPES } from './signal-types.ts';
import { buildSignal, scanTimeline, type Timeline } from './signals.ts';

/** Content categories a search may filter on, each matched against the signal data's field of that name. */
const CONTENT_CATEGORIES = ['technologies', 'competitors', 'pain_points', 'initiatives'] as const;
/** The content filters: the categories, and `keywords` (matched against a signal's text). */
export const CONTENT_FILTER_KEYS = ['keywords', ...CONTENT_CATEGORIES] as const;
export type ContentFilters = { [K in (typeof CONTENT_FILTER_KEYS)[number]]?: string[] };

export interface CompanySearchParams {
  types?: Set<string>;
  after?: number;
  limit: number;
  industries?: Set<string>;
  employeeMin?: number;
  employeeMax?: number;
  content?: ContentFilters;
}

export interface CompanyHit {
  profile: CompanyProfile;
  count: number;
  latest: number;
  /** Timeline index of the newest matching signal (its id is `signalHex(profile, latestIndex)`). */
  latestIndex: number;
}

function lowerAll(list: string[] | undefined): string[] | undefined {
  return list && list.length > 0 ? list.map((s) => s.toLowerCase()) : undefined;
}

/** Every given content category must match; within a category any value matches. */
function contentMatcher(c: ContentFilters | undefined): ((data: Record<string, unknown>) => boolean) | undefined {
  if (!c) return undefined;
  const fields: [string, string[]][] = [];
  for (const key of CONTENT_CATEGORIES) {
    const wanted = lowerAll(c[key]);
    if (wanted) fields.push([key, wanted]);
  }
  const keywords = lowerAll(c.keywords);
  if (fields.length === 0 && !keywords) return undefined;
  return (data) => {
    for (const [key, wanted] of fields) {
      const have = (data[key] as string[] | undefined)?.map((s) => s.toLowerCase()) ?? [];
      if (!wanted.some((w) => have.includes(w))) return false;
    }
    if (keywords) {
      const text =
        `${String(data['text'] ?? '')} ${String(data['summary'] ?? '')} ${((data['keywords'] as string[]) ?? []).join(' ')}`.toLowerCase();
      if (!keywords.some((k) => text.includes(k))) return false;
    }
    return true;
  };
}

/**
 * How many of a timeline's signals detected after `after` are of the wanted `types` and pass `keep`, and when the
 * newest of them was detected (0 when none).
 */
function countMatching(
  tl: Timeline,
  { after, types }: { after?: number | undefined; types?: Set<string> | undefined },
  keep: (index: number, type: number) => boolean = () => true,
): { count: number; latest: number; latestIndex: number } {
  let count = 0;
  let latest = 0;
  let latestIndex = -1;
  for (let i = tl.times.length - 1; i >= 0; i--) {
    const t = tl.times[i]!;
    if (after !== undefined && t <= after) break;
    const ty = tl.types[i]!;
    if (types && !types.has(SIGNAL_TYPES[ty]!.type)) continue;
    if (!keep(i, ty)) continue;
    if (count === 0) {
      latest = t;
      latestIndex = i;
    }
    count++;
  }
  return { count, latest, latestIndex };
}

/** The `limit` hits with the newest signals, ties broken by `name`. */
function newestFirst<H extends { latest: number }>(hits: H[], name: (hit: H) => string, limit: number): H[] {
  hits.sort((a, b) => b.latest - a.latest || (name(a) < name(b) ? -1 : 1));
  return hits.slice(0, limit);
}

export function searchCompanies(store: DataStore, p: CompanySearchParams, now: number): CompanyHit[] {
  const catalog = store.catalog;
  const content = contentMatcher(p.content);
  const industries = p.industries ? new Set([...p.industries].map((s) => s.toLowerCase())) : undefined;
  const hits: CompanyHit[] = [];
  for (let c = 0; c < catalog.domains.length; c++) {
    const profile = catalog.company(c);
    const co = profile.company;
    if (industries && !co.industries?.some((i) => industries.has(i.toLowerCase()))) continue;
    if (p.employeeMin !== undefined || p.employeeMax !== undefined) {
      if (co.employee_count_low === undefined || co.employee_count_high === undefined) continue;
      if (p.employeeMin !== undefined && co.employee_count_high < p.employeeMin) continue;
      if (p.employeeMax !== undefined && co.employee_count_low > p.employeeMax) continue;
    }
    const tl = scanTimeline(profile, now);
    const matched = countMatching(tl, p, (i, ty) => {
      if (!content) return true;
      if (!SOCIAL_TYPES.has(ty)) return false;
      return content(buildSignal(store.seed, profile, i, tl.times[i]!, ty, tl.subs[i]!).data);
    });
    if (matched.count > 0) hits.push({ profile, ...matched });
  }
  return newestFirst(hits, (hit) => hit.profile.domain, p.limit);
}

export interface ContactSearchParams {
  types?: Set<string>;
  after?: number;
  limit: number;
  seniority?: Set<string>;
  department?: Set<string>;
  jobTitle?: string;
}

export interface ContactHit {
  person: Person;
  count: number;
  latest: number;
  /** Timeline index of the newest matching signal. */
  latestIndex: number;
}

/** Catalog companies whose staff the contact search covers. */
export const CONTACT_SEARCH_COMPANIES = 600;

export function searchContacts(store: DataStore, p: ContactSearchParams, now: number): ContactHit[] {
  const catalog = store.catalog;
  const title = p.jobTitle?.toLowerCase();
  const hits: ContactHit[] = [];
  const companies = Math.min(CONTACT_SEARCH_COMPANIES, catalog.domains.length);
  for (let c = 0; c < companies; c++) {
    const profile = catalog.company(c);
    const staff = staffCount(store.seed, profile.domain);
    const seen = new Set<string>();
    for (let k = 0; k < staff; k++) {
      const email = staffEmail(store.seed, profile.domain, k);
      if (seen.has(email) || !personExists(store.seed, email)) continue;
      seen.add(email);
      const person = personFromEmail(store.seed, email, profile);
      const ct = person.contact;
      if (p.seniority && !p.seniority.has(ct.seniority.toLowerCase())) continue;
      if (p.department && !p.department.has(ct.department.toLowerCase())) continue;
      if (title && !ct.job_title.toLowerCase().includes(title)) continue;
      const matched = countMatching(scanTimeline(person, now), p);
      if (matched.count > 0) hits.push({ person, ...matched });
    }
  }
  return newestFirst(hits, (hit) => hit.person.email, p.limit);
}

export interface CatalogStats {
  byType: number[];
  total: number;
  companies: number;
  latest: number | undefined;
  medianAgeHours: number | null;
}

const statsCache = new WeakMap<DataStore, { minute: number; stats: CatalogStats }>();

/**
 * Signal counts per type over the catalog's visible timelines, and freshness. Computed once per store and clock
 * minute (one entry per store), since the types list and stats are free and may be called often.
 */
export function catalogStats(store: DataStore, now: number): CatalogStats {
  const minute = Math.floor(now / 60_000);
  const cached = statsCache.get(store);
  if (cached && cached.minute === minute) return cached.stats;
  const stats = computeStats(store, now);
  statsCache.set(store, { minute, stats });
  return stats;
}

function computeStats(store: DataStore, now: number): CatalogStats {
  const catalog = store.catalog;
  const byType = SIGNAL_TYPES.map(() => 0);
  let total = 0;
  let latest: number | undefined;
  const newestAges: number[] = [];
  for (let c = 0; c < catalog.domains.length; c++) {
    const tl = scanTimeline(catalog.company(c), now);
    for (const ty of tl.types) byType[ty]!++;
    total += tl.times.length;
    const last = tl.times[tl.times.length - 1];
    if (last !== undefined) {
      newestAges.push(now - last);
      if (latest === undefined || last > latest) latest = last;
    }
  }
  newestAges.sort((a, b) => a - b);
  const mid = newestAges[Math.floor(newestAges.length / 2)];
  return {
    byType,
    total,
    companies: catalog.domains.length,
    latest,
    medianAgeHours: mid === undefined ? null : Math.round((mid / 3_600_000) * 10) / 10,
  };
}
