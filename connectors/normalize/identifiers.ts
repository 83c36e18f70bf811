/**
 * A row's identifier, per role: normalized into the key rows are deduplicated by (two rows with the same key name the
 * same thing to the service) and the value sent to it. A row tries its identifier columns in order and uses the
 * first that normalizes to something usable.
 */
import type { IdentifierRole } from './columns.ts';
import { domainFromWebsite, type Normalized } from './domain.ts';
import { normalizeEmail } from './email.ts';

/** A usable identifier: its role, the dedupe key, what is sent to the service, and the value as the input had it. */
export interface Identifier {
  role: IdentifierRole;
  key: string;
  send: string;
  raw: string;
}

export type Identified = ({ ok: true } & Identifier) | { ok: false; reason: string };

const LINKEDIN_COMPANY =
  /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?linkedin\.com\/(?:company|school|showcase)\/([^/?#\s]+)\/?(?:[/?#].*)?$/i;
const LINKEDIN_PERSON = /^(?:https?:\/\/)?(?:[a-z]{2,3}\.)?linkedin\.com\/(?:in|pub)\/([^/?#\s]+)\/?(?:[/?#].*)?$/i;

/** A LinkedIn company page (`linkedin.com/company/<slug>`, any subdomain or trailing path) as its canonical URL. */
export function linkedinCompanyUrl(raw: unknown): Normalized {
  return linkedinUrl(raw, LINKEDIN_COMPANY, 'company', 'not a LinkedIn company URL (…linkedin.com/company/<name>)');
}

/** A LinkedIn profile (`linkedin.com/in/<slug>`) as its canonical URL. */
export function linkedinPersonUrl(raw: unknown): Normalized {
  return linkedinUrl(raw, LINKEDIN_PERSON, 'in', 'not a LinkedIn profile URL (…linkedin.com/in/<name>)');
}

function linkedinUrl(raw: unknown, pattern: RegExp, kind: string, reason: string): Normalized {
  if (typeof raw !== 'string') return { ok: false, reason: raw == null ? 'empty' : `not a string (${typeof raw})` };
  const text = raw.trim();
  if (text === '') return { ok: false, reason: 'empty' };
  const slug = pattern.exec(text)?.[1];
  if (!slug) return { ok: false, reason };
  let decoded: string;
  try {
    decoded = decodeURIComponent(slug);
  } catch {
    decoded = slug;
  }
  return { ok: true, value: `https://www.linkedin.com/${kind}/${encodeURIComponent(decoded.toLowerCase())}` };
}

/** What CRMs hold where nobody knew the company's name: never sent (each would be a paid call for nothing). */
const PLACEHOLDER_NAMES = new Set([
  'unknown',
  'n/a',
  'na',
  'none',
  'null',
  'tbd',
  'test',
  '-',
  '?',
  'no name',
  'unnamed',
]);

/** A company name as sent: trimmed, inner runs of spaces made one. Its key ignores case. */
export function companyName(raw: unknown): Normalized {
  if (typeof raw !== 'string') return { ok: false, reason: raw == null ? 'empty' : `not a string (${typeof raw})` };
  const name = raw.trim().replace(/\s+/g, ' ');
  if (name === '') return { ok: false, reason: 'empty' };
  if (!/[\p{L}\p{N}]/u.test(name)) return { ok: false, reason: 'no letter or digit in the company name' };
  if (PLACEHOLDER_NAMES.has(name.toLowerCase())) return { ok: false, reason: `"${name}" is a placeholder, not a name` };
  if (name.length > 200) return { ok: false, reason: 'a company name longer than 200 characters' };
  return { ok: true, value: name };
}

/**
 * Dedupe keys are the normalized value; roles other than `domain` and `email` are prefixed, so that a company named
 * "acme.com" and the domain acme.com stay two inputs (the name may not resolve to that domain).
 */
const KEY_PREFIX: Record<IdentifierRole, string> = {
  domain: '',
  email: '',
  linkedin_url: 'li:',
  linkedin_person: 'in:',
  company_name: 'name:',
};

/** The role of an identifier by its dedupe key (batch items carry only the key). */
export function roleOfKey(key: string): IdentifierRole {
  if (key.startsWith('li:')) return 'linkedin_url';
  if (key.startsWith('in:')) return 'linkedin_person';
  if (key.startsWith('name:')) return 'company_name';
  return key.includes('@') ? 'email' : 'domain';
}

/** Normalizes one value in a role; a LinkedIn company URL found in a website column is taken as what it is. */
export function identify(role: IdentifierRole, raw: unknown): Identified {
  if (role === 'domain' && typeof raw === 'string' && LINKEDIN_COMPANY.test(raw.trim())) {
    return identify('linkedin_url', raw);
  }
  const outcome = NORMALIZERS[role](raw);
  if (!outcome.ok) return outcome;
  const key = KEY_PREFIX[role] + (role === 'company_name' ? outcome.value.toLowerCase() : outcome.value);
  return { ok: true, role, key, send: outcome.value, raw: String(raw) };
}

const NORMALIZERS: Record<IdentifierRole, (raw: unknown) => Normalized> = {
  domain: domainFromWebsite,
  linkedin_url: linkedinCompanyUrl,
  company_name: companyName,
  email: normalizeEmail,
  linkedin_person: linkedinPersonUrl,
};

/**
 * The first usable identifier among a row's candidates (in the order its columns are tried), or why none is: the
 * reason of the first non-empty candidate, else "empty".
 */
export function firstUsable(candidates: readonly { role: IdentifierRole; raw: unknown }[]): Identified {
  let failure: string | undefined;
  for (const { role, raw } of candidates) {
    const outcome = identify(role, raw);
    if (outcome.ok) return outcome;
    if (failure === undefined && outcome.reason !== 'empty') failure = outcome.reason;
  }
  return { ok: false, reason: failure ?? 'empty' };
}
