/**
 * Buyer intent: each topic has a fixed, seeded list of contacts (20 to 300), ordered by falling intent score.
 * Item `j` of topic `n` is computed on demand from (seed, n, j), so pages and export rows need no storage.
 */
import { hash2, hashString, Rng } from '../random.ts';
import type { Catalog } from './catalog.ts';
import { employeeBucket } from './companies.ts';
import { personFromEmail, staffCount, staffEmail } from './contacts.ts';
import type { Seniority } from './vocab.ts';

/** Spec 2.7 item; field names the spec leaves open are fixed in sandbox/README.md. */
export interface IntentItem {
  topic_id: string;
  intent_score: number;
  contact: {
    first_name: string;
    last_name: string;
    email: string | null;
    email_validation_status: string | null;
    job_title: string;
    linkedin_url: string | null;
    mobile_phone: string | null;
    seniority: Seniority;
    department: string;
  };
  company: {
    name: string;
    domain: string;
    industry: string;
    revenue_bucket: string;
    employee_bucket: string;
  };
}

export interface IntentFilter {
  email_validated?: boolean;
  has_email?: boolean;
  has_mobile?: boolean;
  /** Lower-cased seniority values. */
  seniority?: Set<string>;
  /** Lower-cased department names. */
  department?: Set<string>;
}

/**
 * Opt-in (`intentSurfacing`): a `share` of each topic's contacts start showing intent only at a time spread evenly
 * over `days` after `from` (epoch ms), so a feed run later finds contacts an earlier one could not. Off by default:
 * every contact shows intent at any time.
 */
export interface IntentSurfacing {
  from: number;
  days: number;
  share: number;
}

/** When item `j` of topic `n` starts showing intent (whole seconds), or -Infinity when it always has. */
export function intentSurfacedAt(seed: number, n: number, j: number, surfacing: IntentSurfacing | undefined): number {
  if (!surfacing) return Number.NEGATIVE_INFINITY;
  const u = hash2(hashString('intent-surfacing', seed) ^ n, j) / 4294967296;
  if (u >= surfacing.share) return Number.NEGATIVE_INFINITY;
  const offset = (u / surfacing.share) * surfacing.days * 86_400_000;
  return Math.floor((surfacing.from + offset) / 1000) * 1000;
}

export function topicContactCount(seed: number, n: number): number {
  const u = hash2(hashString('topic-size', seed), n) / 4294967296;
  return 20 + Math.floor(u * u * 281);
}

export function intentItem(seed: number, catalog: Catalog, n: number, j: number, count: number): IntentItem {
  const rng = new Rng(hash2(hashString('intent', seed) ^ n, j));
  const ci = rng.int(0, catalog.domains.length - 1);
  const profile = catalog.company(ci);
  const k = rng.int(0, staffCount(seed, profile.domain) - 1);
  const person = personFromEmail(seed, staffEmail(seed, profile.domain, k), profile);
  const hasEmail = rng.chance(0.88);
  const c = person.contact;
  return {
    topic_id: `b2b_${n}`,
    intent_score: Math.round((99.5 - (60 * (j + rng.next() * 0.9)) / count) * 10) / 10,
    contact: {
      first_name: c.first_name,
      last_name: c.last_name,
      email: hasEmail ? c.email : null,
      email_validation_status: hasEmail ? person.validationStatus : null,
      job_title: c.job_title,
      linkedin_url: rng.chance(0.85) ? c.linkedin_url : null,
      mobile_phone: person.mobilePhone,
      seniority: c.seniority,
      department: c.department,
    },
    company: {
      name: profile.company.name,
      domain: profile.domain,
      industry: profile.industry,
      revenue_bucket: profile.revenueRange,
      employee_bucket: employeeBucket(profile),
    },
  };
}

export function matchesIntentFilter(item: IntentItem, f: IntentFilter): boolean {
  const c = item.contact;
  if (f.email_validated === true && (c.email === null || c.email_validation_status === null)) return false;
  if (f.has_email !== undefined && (c.email !== null) !== f.has_email) return false;
  if (f.has_mobile !== undefined && (c.mobile_phone !== null) !== f.has_mobile) return false;
  if (f.seniority && !f.seniority.has(c.seniority.toLowerCase())) return false;
  if (f.department && !f.department.has(c.department.toLowerCase())) return false;
  return true;
}

/** Fixed width of every export line, newline included (lines are padded with spaces before the newline). */
export const EXPORT_LINE_WIDTH = 768;

/** One export line of exactly EXPORT_LINE_WIDTH bytes (all generated text is ASCII). */
export function exportLine(item: IntentItem): string {
  const json = JSON.stringify(item);
  const pad = EXPORT_LINE_WIDTH - 1 - json.length;
  if (pad < 0) throw new Error(`export line longer than ${EXPORT_LINE_WIDTH - 1} bytes`);
  return json + ' '.repeat(pad) + '\n';
}
