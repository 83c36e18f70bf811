import { domainToASCII } from 'node:url';
import type { Normalized } from './domain.ts';

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

/** Trims an address and lower-cases its domain (the local part is case-sensitive by RFC 5321, so it is kept). */
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
  return { ok: true, value: `${local}@${domain}` };
}
