/**
 * Companies: any syntactically valid domain resolves deterministically from (seed, domain) to a company profile
 * or to nothing (about 8%). The profile carries the spec 2.1 `company` object (optional fields present only when
 * "known"), the firmographics used elsewhere, and the parameters of the company's signal timeline.
 */
import { hash2, hashString, hex8, Rng, unit } from '../random.ts';
import { YEAR } from '../time.ts';
import { COMPANY_TYPE_CUMULATIVE, type ListingKind } from './signal-types.ts';
import { COMPANY_SUFFIXES, INDUSTRIES, TIERS, type Tier } from './vocab.ts';

/** The `company` object of spec 2.1, exactly as it is written into responses. */
export interface CompanyObject {
  name: string;
  domain: string;
  linkedin_url?: string;
  industries?: string[];
  employee_count_low?: number;
  employee_count_high?: number;
  revenue?: string;
  description?: string | null;
}

/** Who owns a signal timeline: its id prefix and the shape of its timeline. */
export interface TimelineOwner {
  /** Key that names the owner in the signal registry (a domain, or `contact:<email>`). */
  key: string;
  h1: number;
  h2: number;
  /** First 12 hex digits of every signal id of this owner. */
  idPrefix: string;
  /** Signals per millisecond (0 = none). */
  rate: number;
  /** Cumulative weights over SIGNAL_TYPES indexes. */
  typeCumulative: number[];
}

export interface CompanyProfile extends TimelineOwner {
  domain: string;
  company: CompanyObject;
  slug: string;
  tier: Tier;
  tierIndex: number;
  listing: ListingKind;
  /** Primary industry even when `company.industries` is not "known". */
  industry: string;
  employeesLow: number;
  employeesHigh: number;
  revenueRange: string;
  foundedYear: number;
}

export const NOT_FOUND_SHARE = 0.08;
const RESERVED_TLDS = new Set(['invalid', 'test', 'example', 'localhost', 'local']);
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** Lower-cases, trims, drops a trailing dot and a leading `www.`; the domain is not otherwise rewritten. */
export function normalizeDomain(input: string): string {
  let d = input.trim().toLowerCase();
  if (d.endsWith('.')) d = d.slice(0, -1);
  if (d.startsWith('www.')) d = d.slice(4);
  return d;
}

/** A syntactically valid domain name (after normalizeDomain): labels of letters, digits and inner hyphens. */
export function isValidDomain(d: string): boolean {
  if (d.length < 3 || d.length > 253) return false;
  const labels = d.split('.');
  if (labels.length < 2) return false;
  for (let i = 0; i < labels.length - 1; i++) if (!LABEL.test(labels[i]!)) return false;
  return TLD.test(labels[labels.length - 1]!);
}

function capitalize(word: string): string {
  return word.length === 0 ? word : word[0]!.toUpperCase() + word.slice(1);
}

/** Display name from a domain's first label: `acme-robotics.com` → `Acme Robotics` (plus a seeded suffix). */
export function nameFromDomain(label: string, suffix: string): string {
  const words = label
    .split(/[-_]+/)
    .filter((w) => w.length > 0)
    .map(capitalize);
  const base = words.length > 0 ? words.join(' ') : capitalize(label);
  return suffix ? `${base} ${suffix}` : base;
}

/** `Acme Robotics Inc` → `acme-robotics` (the inverse of nameFromDomain for names it produced). */
export function slugFromName(name: string): string {
  const words = name
    .toLowerCase()
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0);
  const suffixes = new Set(COMPANY_SUFFIXES.filter((s) => s).map((s) => s.toLowerCase()));
  suffixes.add('llc');
  suffixes.add('ltd');
  suffixes.add('co');
  suffixes.add('gmbh');
  while (words.length > 1 && suffixes.has(words[words.length - 1]!)) words.pop();
  return words.join('-');
}

/** `https://www.linkedin.com/company/acme/` or `/company/acme` → `acme`; undefined when it is not a company URL. */
export function slugFromLinkedinUrl(url: string): string | undefined {
  const m = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?(?:linkedin\.com)?\/company\/([a-z0-9][a-z0-9-]*)\/?(?:[?#].*)?$/i.exec(
    url.trim(),
  );
  return m ? m[1]!.toLowerCase() : undefined;
}

/** The shared part of owner construction: hashes and id prefix. */
export function ownerHashes(key: string, seed: number): { h1: number; h2: number; idPrefix: string } {
  const h1 = hashString(key, seed);
  const h2 = hashString(key, seed ^ 0x5bd1e995);
  return { h1, h2, idPrefix: hex8(h1) + hex8(h2).slice(0, 4) };
}

const TIER_WEIGHTS = TIERS.map((t) => t.weight);

/**
 * Resolves a normalized, valid domain to its company, or null when the sandbox says it does not exist. Pure and
 * cheap (one generator, a handful of draws): bulk enrich calls it for every domain.
 */
export function resolveCompany(seed: number, domain: string): CompanyProfile | null {
  const dot = domain.lastIndexOf('.');
  if (RESERVED_TLDS.has(domain.slice(dot + 1))) return null;
  const { h1, h2, idPrefix } = ownerHashes(domain, seed);
  if (unit(hash2(h1, 0x0e1157)) < NOT_FOUND_SHARE) return null;
  const rng = new Rng(hash2(h2, 0xc0ffee));
  const label = domain.slice(0, domain.indexOf('.'));
  const tierIndex = rng.weighted(TIER_WEIGHTS);
  const tier = TIERS[tierIndex]!;
  const suffix = rng.pick(COMPANY_SUFFIXES);
  const name = nameFromDomain(label, suffix);
  const industry = rng.pick(INDUSTRIES);
  const [lo, hi] = rng.pick(tier.employees);
  const revenueRange = rng.pick(tier.revenue);
  const publicShare = tierIndex >= 3 ? 0.6 : tierIndex === 2 ? 0.1 : 0;
  let listing: ListingKind = 'private';
  if (rng.chance(publicShare)) listing = rng.chance(0.2) ? 'foreign_public' : 'us_public';
  const dormant = rng.chance(0.06);
  const perYear = rng.float(tier.signalsPerYear[0], tier.signalsPerYear[1]);
  const foundedYear = 2025 - rng.int(1, tierIndex >= 3 ? 60 : 15);

  const company: CompanyObject = { name, domain };
  if (rng.chance(0.8)) {
    company.linkedin_url = rng.chance(0.25) ? `/company/${label}` : `https://www.linkedin.com/company/${label}`;
  }
  if (rng.chance(0.85)) {
    company.industries = rng.chance(0.3) ? [industry, rng.pick(INDUSTRIES)].filter(uniq) : [industry];
  }
  if (rng.chance(0.75)) {
    company.employee_count_low = lo!;
    company.employee_count_high = hi!;
  }
  if (rng.chance(0.6)) company.revenue = revenueRange;
  const d = rng.next();
  if (d < 0.25) {
    company.description = `${name} provides ${industry.toLowerCase()} products to ${tierIndex >= 3 ? 'global enterprises' : 'growing businesses'}.`;
  } else if (d < 0.75) {
    company.description = null;
  }

  return {
    key: domain,
    h1,
    h2,
    idPrefix,
    rate: dormant ? 0 : perYear / YEAR,
    typeCumulative: COMPANY_TYPE_CUMULATIVE[listing],
    domain,
    company,
    slug: label,
    tier,
    tierIndex,
    listing,
    industry,
    employeesLow: lo!,
    employeesHigh: hi!,
    revenueRange,
    foundedYear,
  };
}

function uniq<T>(v: T, i: number, all: T[]): boolean {
  return all.indexOf(v) === i;
}

/** Employee count bucket label used by buyer-intent items. */
export function employeeBucket(p: CompanyProfile): string {
  const n = p.employeesHigh;
  if (n <= 10) return '1-10';
  if (n <= 50) return '11-50';
  if (n <= 200) return '51-200';
  if (n <= 500) return '201-500';
  if (n <= 1000) return '501-1000';
  if (n <= 5000) return '1001-5000';
  if (n <= 10000) return '5001-10000';
  return '10001+';
}

/** The older GET enrich form's firmographics (spec 4.1): funding figures derived from the profile. */
export function legacyFunding(
  seed: number,
  p: CompanyProfile,
): { total_raised: number | null; last_round: string | null; valuation: number | null } {
  const rng = new Rng(hash2(p.h1 ^ seed, 0xf0f0));
  if (p.listing !== 'private') return { total_raised: null, last_round: 'IPO', valuation: null };
  if (p.tierIndex === 0 && rng.chance(0.5)) return { total_raised: null, last_round: null, valuation: null };
  const rounds = ['Seed', 'Series A', 'Series B', 'Series C', 'Series D'];
  const r = Math.min(rounds.length - 1, p.tierIndex + rng.int(0, 1));
  const raised = Math.round((0.5 + rng.next()) * 2 ** (r + 1) * 5) * 1_000_000;
  return {
    total_raised: raised,
    last_round: rounds[r]!,
    valuation: rng.chance(0.6) ? raised * rng.int(4, 12) : null,
  };
}
