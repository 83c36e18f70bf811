import { describe, expect, it } from 'vitest';
import { domainFromWebsite } from '../../../connectors/normalize/domain.ts';
import { normalizeEmail } from '../../../connectors/normalize/email.ts';

describe('domainFromWebsite', () => {
  it.each([
    ['acme.com', 'acme.com'],
    ['  ACME.com ', 'acme.com'],
    ['https://www.acme.com/pricing?x=1#top', 'acme.com'],
    ['http://user:pw@Acme.COM:8080/', 'acme.com'],
    ['//www2.acme.co.uk', 'acme.co.uk'],
    ['acme.com.', 'acme.com'],
    ['blog.acme.io', 'blog.acme.io'],
    ['Bücher.de', 'xn--bcher-kva.de'],
    ['https://münchen.de/', 'xn--mnchen-3ya.de'],
  ])('%j becomes %j', (raw, expected) => {
    expect(domainFromWebsite(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    [null, 'empty'],
    ['n/a', 'no top-level domain'],
    ['localhost', 'no top-level domain'],
    ['http://', 'no host name'],
    ['192.168.0.1', 'an IP address, not a domain'],
    ['not a website', 'contains whitespace'],
    ['-acme.com', 'not a valid host name'],
    ['acme.c0m', 'not a valid top-level domain'],
  ])('%j is invalid (%s)', (raw, reason) => {
    const result = domainFromWebsite(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });
});

describe('normalizeEmail', () => {
  it('trims and lower-cases the whole address, as the service collapses them', () => {
    expect(normalizeEmail('  Jane.Doe@EXAMPLE.Com ')).toEqual({ ok: true, value: 'jane.doe@example.com' });
    expect(normalizeEmail('NIA.OBRIEN@X.COM')).toEqual(normalizeEmail(' nia.obrien@x.com '));
    expect(normalizeEmail('nia+crm@x.com')).not.toEqual(normalizeEmail('nia@x.com'));
  });
  it.each(['', 'plain', '@example.com', 'a@', 'a@@b.com', 'a..b@example.com', 'a@nodot', 'a b@example.com'])(
    '%j is invalid',
    (raw) => {
      expect(normalizeEmail(raw).ok).toBe(false);
    },
  );
});
