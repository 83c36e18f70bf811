/**
 * People. A person is derived from (seed, email address): names from the local part when it reads like
 * `first.last`, everything else from hashes, so a contact found by enrich, search or buyer intent is always the
 * same person. A person also owns a small timeline of person-level signals (half of them none).
 */
import { hash2, hashString, hex8, Rng, unit } from '../random.ts';
import { YEAR } from '../time.ts';
import type { Catalog } from './catalog.ts';
import { type CompanyProfile, isValidDomain, ownerHashes, resolveCompany, type TimelineOwner } from './companies.ts';
import { PERSON_TYPE_CUMULATIVE } from './signal-types.ts';
import {
  CXO_TITLES,
  DEPARTMENT_TITLE,
  DEPARTMENTS,
  FIRST_NAMES,
  FREE_PROVIDERS,
  LAST_NAMES,
  PLACES,
  ROLE_LOCAL_PARTS,
  SENIORITIES,
  SENIORITY_WEIGHTS,
  type Seniority,
  STAFF_TITLES,
} from './vocab.ts';

/** The spec 2.5 `contact` object plus seniority and department. */
export interface ContactObject {
  first_name: string;
  last_name: string;
  full_name: string;
  email: string;
  job_title: string;
  linkedin_url: string;
  city: string;
  state: string;
  country: string;
  seniority: Seniority;
  department: string;
}

export interface Person extends TimelineOwner {
  email: string;
  contact: ContactObject;
  employer: CompanyProfile;
  /** `+1-415-555-0123`-style number, or null when none is known. */
  mobilePhone: string | null;
  /** Buyer-intent style validation status (spec 2.7), or null when not validated. */
  validationStatus: string | null;
}

const EMAIL = /^[a-z0-9](?:[a-z0-9._%+-]{0,62}[a-z0-9_%+-])?@[a-z0-9.-]+$/;

/** A syntactically valid address (after trim + lower-case): `local@domain`, dot-atom local part, valid domain. */
export function isValidEmail(email: string): boolean {
  if (email.length > 254 || !EMAIL.test(email)) return false;
  const at = email.indexOf('@');
  const local = email.slice(0, at);
  if (local.includes('..')) return false;
  return isValidDomain(email.slice(at + 1));
}

function capitalize(word: string): string {
  return word.length === 0 ? word : word[0]!.toUpperCase() + word.slice(1);
}

const SENIORITY_CUMULATIVE_TOTAL = SENIORITY_WEIGHTS.reduce((a, b) => a + b, 0);

function pickSeniority(u: number): Seniority {
  let r = u * SENIORITY_CUMULATIVE_TOTAL;
  for (let i = 0; i < SENIORITIES.length; i++) {
    r -= SENIORITY_WEIGHTS[i]!;
    if (r < 0) return SENIORITIES[i]!;
  }
  return 'Staff';
}

/** A job title for a seniority and department. */
export function jobTitle(rng: Rng, seniority: Seniority, department: string): string {
  const short = DEPARTMENT_TITLE[department] ?? department;
  switch (seniority) {
    case 'Cxo':
      return CXO_TITLES[department] ?? `Chief ${short} Officer`;
    case 'Vp':
      return rng.chance(0.3) ? `Senior Vice President of ${short}` : `VP of ${short}`;
    case 'Director':
      return rng.chance(0.3) ? `Senior Director of ${short}` : `Director of ${short}`;
    case 'Manager':
      return rng.chance(0.5) ? `${short} Manager` : `Senior ${short} Manager`;
    default:
      return rng.pick(STAFF_TITLES[department] ?? ['Specialist']);
  }
}

/** Builds the person behind a (normalized, valid) address at a known employer. */
export function personFromEmail(seed: number, email: string, employer: CompanyProfile): Person {
  const key = `contact:${email}`;
  const { h1, h2, idPrefix } = ownerHashes(key, seed);
  const rng = new Rng(hash2(h1, 0x9e50));
  const local = email.slice(0, email.indexOf('@'));
  const parts = local.split(/[._-]+/).filter((p) => /^[a-z]{2,}$/.test(p));
  let first: string;
  let last: string;
  if (parts.length >= 2) {
    first = capitalize(parts[0]!);
    last = capitalize(parts[parts.length - 1]!);
    rng.next();
    rng.next();
  } else if (parts.length === 1 && parts[0]!.length <= 12) {
    first = capitalize(parts[0]!);
    rng.next();
    last = rng.pick(LAST_NAMES);
  } else {
    first = rng.pick(FIRST_NAMES);
    last = rng.pick(LAST_NAMES);
  }
  const seniority = pickSeniority(rng.next());
  const department = rng.pick(DEPARTMENTS);
  const title = jobTitle(rng, seniority, department);
  const place = rng.pick(PLACES);
  const slug = `${first}-${last}-${hex8(h2).slice(0, 6)}`.toLowerCase();
  const mobilePhone = rng.chance(0.4)
    ? `+1-${rng.int(201, 989)}-555-${String(rng.int(100, 9999)).padStart(4, '0')}`
    : null;
  const v = rng.next();
  const validationStatus = v < 0.45 ? 'Valid (Esp)' : v < 0.7 ? 'Valid (Digital)' : null;
  const active = rng.chance(0.5);
  const perYear = rng.float(1, 6);
  return {
    key,
    h1,
    h2,
    idPrefix,
    rate: active ? perYear / YEAR : 0,
    typeCumulative: PERSON_TYPE_CUMULATIVE,
    email,
    employer,
    mobilePhone,
    validationStatus,
    contact: {
      first_name: first,
      last_name: last,
      full_name: `${first} ${last}`,
      email,
      job_title: title,
      linkedin_url: `https://www.linkedin.com/in/${slug}`,
      city: place.city,
      state: place.state,
      country: place.country,
      seniority,
      department,
    },
  };
}

/** Why an address resolves to nobody (contact enrich answers 404). */
export type ContactMiss = 'invalid' | 'free_provider' | 'role_account' | 'company_not_found' | 'unknown_person';

/** Contact enrich by email: the person, or the reason there is none. */
export function resolveContactByEmail(seed: number, rawEmail: string): Person | ContactMiss {
  const email = rawEmail.trim().toLowerCase();
  if (!isValidEmail(email)) return 'invalid';
  const at = email.indexOf('@');
  const domain = email.slice(at + 1);
  if (FREE_PROVIDERS.has(domain)) return 'free_provider';
  if (ROLE_LOCAL_PARTS.has(email.slice(0, at))) return 'role_account';
  const employer = resolveCompany(seed, domain);
  if (!employer) return 'company_not_found';
  if (!personExists(seed, email)) return 'unknown_person';
  return personFromEmail(seed, email, employer);
}

/** 85% of plausible addresses at a known company belong to someone. */
export function personExists(seed: number, email: string): boolean {
  return unit(hashString(email, seed ^ 0x7e0b1e)) >= 0.15;
}

/** The `k`-th address of a catalog company's staff directory (`first.last@domain`). */
export function staffEmail(seed: number, domain: string, k: number): string {
  const rng = new Rng(hash2(hashString(domain, seed), 0x57aff + k));
  const first = rng.pick(FIRST_NAMES).toLowerCase();
  const last = rng.pick(LAST_NAMES).toLowerCase();
  const pattern = rng.next();
  if (pattern < 0.7) return `${first}.${last}@${domain}`;
  if (pattern < 0.85) return `${first}_${last}@${domain}`;
  return `${first}-${last}@${domain}`;
}

/** How many people a catalog company lists (3 to 10). */
export function staffCount(seed: number, domain: string): number {
  return 3 + (hash2(hashString(domain, seed), 0x5a1f) % 8);
}

/** A person met through a LinkedIn URL we never served: an employer from the catalog, a name from the slug. */
export function personFromLinkedinSlug(seed: number, slug: string, catalog: Catalog): Person {
  const words = slug.split('-').filter((w) => /^[a-z]{2,}$/.test(w));
  const h = hashString(slug, seed);
  const rng = new Rng(h);
  const first = words[0] ?? rng.pick(FIRST_NAMES).toLowerCase();
  const last = words[1] ?? rng.pick(LAST_NAMES).toLowerCase();
  const domain = catalog.domains[h % catalog.domains.length]!;
  const person = personFromEmail(seed, `${first}.${last}@${domain}`, catalog.company(h % catalog.domains.length));
  person.contact.linkedin_url = `https://www.linkedin.com/in/${slug}`;
  return person;
}

/** `https://www.linkedin.com/in/jane-doe-1a2b3c/` or `/in/jane-doe` → `jane-doe-1a2b3c`. */
export function slugFromPersonUrl(url: string): string | undefined {
  const m = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?(?:linkedin\.com)?\/in\/([a-z0-9][a-z0-9-]*)\/?(?:[?#].*)?$/i.exec(
    url.trim(),
  );
  return m ? m[1]!.toLowerCase() : undefined;
}
