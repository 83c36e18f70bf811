/**
 * Every range docs/security.md's SSRF guard section promises to refuse, checked at both ends (so a prefix one bit
 * too short or too long fails) with the first address past each end still reachable, and every IPv6 form that
 * carries an IPv4 address judged by that address.
 */
import { describe, expect, it } from 'vitest';
import { blockedRange } from '../../../connectors/webhooks/safe-dispatcher.ts';

/** [range as docs/security.md names it, first address, last address, label the refusal must name, just outside]. */
const IPV4: Array<[string, string, string, RegExp, string[]]> = [
  ['0.0.0.0/8', '0.0.0.0', '0.255.255.255', /unspecified/, ['1.0.0.0']],
  ['10.0.0.0/8', '10.0.0.0', '10.255.255.255', /private/, ['9.255.255.255', '11.0.0.0']],
  ['100.64.0.0/10', '100.64.0.0', '100.127.255.255', /carrier-grade NAT/, ['100.63.255.255', '100.128.0.0']],
  ['127.0.0.0/8', '127.0.0.0', '127.255.255.255', /loopback/, ['126.255.255.255', '128.0.0.0']],
  ['169.254.0.0/16', '169.254.0.0', '169.254.255.255', /link-local/, ['169.253.255.255', '169.255.0.0']],
  ['172.16.0.0/12', '172.16.0.0', '172.31.255.255', /private/, ['172.15.255.255', '172.32.0.0']],
  ['192.0.0.0/24', '192.0.0.0', '192.0.0.255', /IETF/, ['191.255.255.255', '192.0.1.0']],
  ['192.0.2.0/24', '192.0.2.0', '192.0.2.255', /documentation/, ['192.0.1.255', '192.0.3.0']],
  ['192.88.99.0/24', '192.88.99.0', '192.88.99.255', /6to4 relay/, ['192.88.98.255', '192.88.100.0']],
  ['192.168.0.0/16', '192.168.0.0', '192.168.255.255', /private/, ['192.167.255.255', '192.169.0.0']],
  ['198.18.0.0/15', '198.18.0.0', '198.19.255.255', /benchmarking/, ['198.17.255.255', '198.20.0.0']],
  ['198.51.100.0/24', '198.51.100.0', '198.51.100.255', /documentation/, ['198.51.99.255', '198.51.101.0']],
  ['203.0.113.0/24', '203.0.113.0', '203.0.113.255', /documentation/, ['203.0.112.255', '203.0.114.0']],
  ['224.0.0.0/4', '224.0.0.0', '239.255.255.255', /multicast/, ['223.255.255.255']],
  ['240.0.0.0/4', '240.0.0.0', '255.255.255.255', /reserved/, []],
];

const IPV6: Array<[string, string, string, RegExp, string[]]> = [
  ['::/128', '::', '::', /unspecified/, []],
  ['::1/128', '::1', '::1', /loopback/, []],
  ['::/96', '::2', '::ffff:ffff', /IPv4-compatible|via IPv6/, ['0:0:0:0:0:1::']],
  [
    '100::/64',
    '100::',
    '100::ffff:ffff:ffff:ffff',
    /discard-only/,
    ['ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '100:0:0:1::'],
  ],
  ['64:ff9b:1::/48', '64:ff9b:1:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', /local-use NAT64/, ['64:ff9b:2::']],
  [
    '2001:db8::/32',
    '2001:db8::',
    '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    /documentation/,
    ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::'],
  ],
  [
    'fc00::/7',
    'fc00::',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    /unique local/,
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ],
  [
    'fe80::/10',
    'fe80::',
    'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    /link-local/,
    ['fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ],
  ['fec0::/10', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', /site-local/, []],
  ['ff00::/8', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', /multicast/, []],
];

describe('SSRF guard: every range docs/security.md lists', () => {
  it.each([...IPV4, ...IPV6])(
    'refuses %s at both ends and admits the first address past it',
    (_r, first, last, label, outside) => {
      expect(blockedRange(first), first).toMatch(label);
      expect(blockedRange(last), last).toMatch(label);
      for (const address of outside) expect(blockedRange(address), address).toBeUndefined();
    },
  );
});

function hex(v4: string): [string, string] {
  const o = v4.split('.').map(Number);
  return [((o[0]! << 8) | o[1]!).toString(16), ((o[2]! << 8) | o[3]!).toString(16)];
}

/** The IPv6 spellings docs/security.md says are judged by the IPv4 address they carry. */
function carriers(v4: string): Array<[string, string]> {
  const [hi, lo] = hex(v4);
  const inverted = hex(
    v4
      .split('.')
      .map((o) => 255 - Number(o))
      .join('.'),
  );
  return [
    ['IPv4-mapped', `::ffff:${v4}`],
    ['IPv4-mapped (hex)', `::ffff:${hi}:${lo}`],
    ['IPv4-translated', `::ffff:0:${v4}`],
    ['IPv4-translated (hex)', `0:0:0:0:ffff:0:${hi}:${lo}`],
    ['NAT64 64:ff9b::/96', `64:ff9b::${hi}:${lo}`],
    ['local-use NAT64 64:ff9b:1::/96', `64:ff9b:1::${hi}:${lo}`],
    ['6to4 2002::/16', `2002:${hi}:${lo}::1`],
    // Teredo: the server in the clear, the client inverted; the other end public (8.8.8.8).
    ['Teredo server', `2001:0:${hi}:${lo}:0:0:f7f7:f7f7`],
    ['Teredo client', `2001:0:808:808:0:0:${inverted[0]}:${inverted[1]}`],
  ];
}

describe('SSRF guard: IPv6 forms carrying an IPv4 address', () => {
  const insides = IPV4.flatMap(([range, first, last, label]) => [
    [range, first, label],
    [range, last, label],
  ]) as Array<[string, string, RegExp]>;

  it.each(insides)('refuses every form of %s (%s)', (_range, v4, label) => {
    for (const [form, address] of carriers(v4)) {
      const why = blockedRange(address);
      expect(why, `${form} ${address}`).toMatch(label);
      expect(why, `${form} ${address}`).toMatch(/via IPv6/);
    }
    // IPv4-compatible (::a.b.c.d), deprecated: refused for the address it carries or as a form.
    if (v4 !== '0.0.0.0') expect(blockedRange(`::${v4}`), `::${v4}`).toBeDefined();
  });

  it('admits every form of a public IPv4 address except the deprecated IPv4-compatible one', () => {
    for (const [form, address] of carriers('93.184.216.34')) {
      expect(blockedRange(address), `${form} ${address}`).toBeUndefined();
    }
    expect(blockedRange('::93.184.216.34')).toMatch(/IPv4-compatible/);
  });
});
