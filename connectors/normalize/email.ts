import { domainToASCII } from 'node:url';
import type { Normalized } from './domain.ts';

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

/**
 * An address's identity as the service sees it: trimmed and lower-cased whole, local part included.
 *
 * RFC 5321 lets a mail server treat the local part as case-sensitive, but the service does not: its bulk verification
 * collapses addresses that differ only in case or surrounding spaces into one (and charges it once), as the sandbox's
 * `POST /v1/emails/verify/bulk` does. The kit uses the same identity, so that two such rows are one input, one line
 * answered and the other its duplicate, and two chunks never both pay for it. Dots, `+tags` and provider-specific
 * aliases (gmail's dots) are kept: the service does not fold them, so neither does the kit.
 */
export function normalizeEmail(raw: unknown): Normalized {
  if (typeof raw !== 'string') return { ok: false, reason: raw == null ? 'empty' : `not a string (${typeof raw})` };
  const trimmed = raw.trim();
  if (trimmed === '') return { ok: false, reason: 'empty' };
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1)
    return { ok: false, reason: 'not an email address (no local part or domain)' };
  const local = trimmed.slice(0, at);
  if (!LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return { ok: false, reason: 'invalid local part' };
  }
  const domain = domainToASCII(
    trimmed
      .slice(at + 1)
      .toLowerCase()
      .replace(/\.+$/, ''),
  );
  if (domain === '' || !domain.includes('.') || domain.split('.').some((label) => label === '')) {
    return { ok: false, reason: 'invalid domain' };
  }
  return { ok: true, value: `${local.toLowerCase()}@${domain}` };
}
