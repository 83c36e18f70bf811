/**
 * Email verification (spec 2.8). The result is decided by the address alone, from (seed, address), in this order:
 *
 *   syntax invalid                         → not verified (the route reports `invalid_email`)
 *   domain is a common typo (`gmial.com`)  → undeliverable, `possible_typo`, `suggested_correction` set
 *   local part starts with `unknown`       → unknown, `smtp_timeout` (a test hook)
 *   disposable domain (`mailinator.com`)   → undeliverable, `disposable_email`
 *   domain without MX (reserved TLDs, `nomx` in the domain, ~3% of company domains) → undeliverable, `no_mx_record`
 *   ~4% of the remaining addresses (not on `catchall` domains) → unknown, `smtp_timeout`
 *   catch-all domain (`catchall` in the domain, ~10% of company domains) → risky, `catch_all`
 *   role account (`info@`, `sales@` ...)   → risky, `role_account`
 *   local part starts with `bounce`/`nobody`, or ~8% at random → undeliverable, `mailbox_not_found`
 *   otherwise                              → deliverable, `accepted_email`
 */
import { hash2, hashString, unit } from '../random.ts';
import { iso } from '../time.ts';
import { isValidEmail } from './contacts.ts';
import { DISPOSABLE_DOMAINS, DOMAIN_TYPOS, FREE_PROVIDERS, ROLE_LOCAL_PARTS } from './vocab.ts';

export type VerificationResult = 'deliverable' | 'undeliverable' | 'risky' | 'unknown';

export interface Verification {
  email: string;
  result: VerificationResult;
  confidence: number;
  reason: string;
  risk_level: 'low' | 'medium' | 'high' | 'unknown';
  details: {
    is_free_provider: boolean;
    is_disposable: boolean;
    is_role_account: boolean;
    is_catch_all: boolean;
    has_mx_record: boolean;
    email_provider: string;
    domain_age_days: number;
    suggested_correction: string | null;
  };
  validated_at: string;
}

/** Trim + lower-case: the form duplicates are collapsed on. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

export { isValidEmail };

const NO_MX_TLDS = new Set(['invalid', 'test', 'example', 'localhost', 'local']);

function providerFor(domain: string, h: number): string {
  if (domain.startsWith('gmail.') || domain === 'googlemail.com') return 'Google';
  if (/^(outlook|hotmail|live)\./.test(domain)) return 'Microsoft';
  if (domain.startsWith('yahoo.')) return 'Yahoo';
  if (domain === 'icloud.com' || domain === 'me.com') return 'Apple';
  if (FREE_PROVIDERS.has(domain)) return domain.slice(0, domain.indexOf('.'));
  const providers = ['Google Workspace', 'Microsoft 365', 'Microsoft 365', 'Proofpoint', 'Mimecast', 'Other'];
  return providers[h % providers.length]!;
}

/** Verifies one normalized, syntactically valid address at time `now`. */
export function verifyEmail(seed: number, email: string, now: number): Verification {
  const at = email.indexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dh = hashString(domain, seed ^ 0xe3a1);
  const ah = hashString(email, seed ^ 0x5eed);
  const free = FREE_PROVIDERS.has(domain);
  const disposable = DISPOSABLE_DOMAINS.has(domain);
  const role = ROLE_LOCAL_PARTS.has(local) || ROLE_LOCAL_PARTS.has(local.split(/[+.]/)[0]!);
  const typo = DOMAIN_TYPOS[domain];
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  const company = !free && !disposable && typo === undefined;
  const noMx =
    typo !== undefined || NO_MX_TLDS.has(tld) || domain.includes('nomx') || (company && unit(hash2(dh, 1)) < 0.03);
  const catchAll = !noMx && company && (domain.includes('catchall') || unit(hash2(dh, 2)) < 0.1);
  const ageDays = free ? 7000 + (dh % 3000) : 30 + (dh % 9000);

  let result: VerificationResult;
  let reason: string;
  let risk: Verification['risk_level'];
  let confidence: number;
  let suggestion: string | null = null;
  const u = unit(hash2(ah, 3));
  const jitter = unit(hash2(ah, 4)) * 0.05;

  const catchAllByName = catchAll && domain.includes('catchall');
  if (typo !== undefined) {
    result = 'undeliverable';
    reason = 'possible_typo';
    risk = 'high';
    confidence = 0.9 + jitter;
    suggestion = `${local}@${typo}`;
  } else if (local.startsWith('unknown')) {
    [result, reason, risk, confidence] = ['unknown', 'smtp_timeout', 'unknown', 0.2 + jitter];
  } else if (disposable) {
    [result, reason, risk, confidence] = ['undeliverable', 'disposable_email', 'high', 0.93 + jitter];
  } else if (noMx) {
    [result, reason, risk, confidence] = ['undeliverable', 'no_mx_record', 'high', 0.95 + jitter];
  } else if (!catchAllByName && u < 0.04) {
    [result, reason, risk, confidence] = ['unknown', 'smtp_timeout', 'unknown', 0.2 + jitter];
  } else if (catchAll) {
    [result, reason, risk, confidence] = ['risky', 'catch_all', 'medium', 0.55 + jitter];
  } else if (role) {
    [result, reason, risk, confidence] = ['risky', 'role_account', 'medium', 0.7 + jitter];
  } else if (local.startsWith('bounce') || local.startsWith('nobody') || u < 0.12) {
    [result, reason, risk, confidence] = ['undeliverable', 'mailbox_not_found', 'high', 0.9 + jitter];
  } else {
    [result, reason, risk, confidence] = ['deliverable', 'accepted_email', 'low', 0.9 + jitter * 1.9];
  }

  return {
    email,
    result,
    confidence: Math.round(confidence * 100) / 100,
    reason,
    risk_level: risk,
    details: {
      is_free_provider: free,
      is_disposable: disposable,
      is_role_account: role,
      is_catch_all: catchAll,
      has_mx_record: !noMx,
      email_provider: noMx ? 'none' : providerFor(domain, dh),
      domain_age_days: ageDays,
      suggested_correction: suggestion,
    },
    validated_at: iso(now),
  };
}
