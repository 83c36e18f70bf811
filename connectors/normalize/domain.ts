import { domainToASCII } from 'node:url';

export type Normalized = { ok: true; value: string } | { ok: false; reason: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * Turns what a CRM holds in a "website" field into the bare host the API joins on: lower case, no scheme,
 * credentials, `www.`, port, path, query or trailing dot; internationalized names in punycode.
 */
export function domainFromWebsite(raw: unknown): Normalized {
  if (typeof raw !== 'string') return { ok: false, reason: raw == null ? 'empty' : `not a string (${typeof raw})` };
  let host = raw.trim().toLowerCase();
  if (host === '') return { ok: false, reason: 'empty' };
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^\/\//, '');
  host = host.split(/[/?#\\]/, 1)[0] ?? '';
  host = host.slice(host.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return { ok: false, reason: 'an IP address, not a domain' };
  host = host.replace(/:\d*$/, '').replace(/\.+$/, '');
  if (/\s/.test(host)) return { ok: false, reason: 'contains whitespace' };
  host = host.replace(/^www\d*\./, '');
  if (host === '') return { ok: false, reason: 'no host name' };
  const ascii = domainToASCII(host);
  if (ascii === '') return { ok: false, reason: 'not a valid host name' };
  if (ascii.length > 253) return { ok: false, reason: 'longer than 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, reason: 'no top-level domain' };
  if (/^\d+$/.test(labels.at(-1) ?? '')) return { ok: false, reason: 'an IP address, not a domain' };
  if (!labels.every((label) => LABEL.test(label))) return { ok: false, reason: 'not a valid host name' };
  if (!TLD.test(labels.at(-1) ?? '')) return { ok: false, reason: 'not a valid top-level domain' };
  return { ok: true, value: ascii };
}
