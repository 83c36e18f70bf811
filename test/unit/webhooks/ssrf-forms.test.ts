/** IPv6 forms that carry an IPv4 address the SSRF guard must judge by that IPv4 (finding: local-use NAT64, Teredo). */
import { describe, expect, it } from 'vitest';
import { AddressAllowlist, blockedRange, embeddedIPv4s } from '../../../connectors/webhooks/safe-dispatcher.ts';

/** Teredo: server IPv4 in groups 2-3, client IPv4 inverted in groups 6-7. */
function teredo(server: [number, number, number, number], client: [number, number, number, number]): string {
  const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
  const inv = (a: number, b: number) => (~((a << 8) | b) & 0xffff).toString(16);
  return `2001:0:${hex(server[0], server[1])}:${hex(server[2], server[3])}:0:0:${inv(client[0], client[1])}:${inv(client[2], client[3])}`;
}

describe('SSRF guard: IPv6 forms of IPv4 addresses', () => {
  it('decodes the local-use NAT64 prefix 64:ff9b:1::/96 and refuses the rest of 64:ff9b:1::/48', () => {
    expect(embeddedIPv4s('64:ff9b:1::a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(blockedRange('64:ff9b:1::a9fe:a9fe')).toMatch(/link-local \/ cloud metadata .* via IPv6/);
    expect(blockedRange('64:ff9b:1::7f00:1')).toMatch(/loopback/);
    expect(blockedRange('64:ff9b:1::808:808')).toBeUndefined(); // 8.8.8.8
    // Other prefix lengths put the IPv4 elsewhere: the range is refused as a whole.
    expect(blockedRange('64:ff9b:1:a9fe:a9:fe00::')).toMatch(/local-use NAT64/);
  });

  it('decodes Teredo (2001::/32) and refuses it when its client or its server is internal', () => {
    const metadataClient = teredo([8, 8, 8, 8], [169, 254, 169, 254]);
    expect(embeddedIPv4s(metadataClient)).toEqual(['8.8.8.8', '169.254.169.254']);
    expect(blockedRange(metadataClient)).toMatch(/link-local/);
    expect(blockedRange(teredo([10, 0, 0, 1], [8, 8, 4, 4]))).toMatch(/private/);
    expect(blockedRange(teredo([8, 8, 8, 8], [1, 1, 1, 1]))).toBeUndefined();
  });

  it('admits the 6to4, NAT64 and mapped forms of an allowlisted IPv4 range, and only those', () => {
    const allow = new AddressAllowlist(['127.0.0.1/32', '10.1.0.0/16']);
    for (const form of [
      '2002:7f00:1::',
      '64:ff9b::7f00:1',
      '64:ff9b:1::7f00:1',
      '::ffff:127.0.0.1',
      '2002:a01:203::',
    ]) {
      expect(blockedRange(form, allow), form).toBeUndefined();
    }
    expect(blockedRange('2002:7f00:2::', allow)).toMatch(/loopback/);
    expect(blockedRange('2002:a02:203::', allow)).toMatch(/private/);
    expect(blockedRange(teredo([8, 8, 8, 8], [127, 0, 0, 1]), allow)).toMatch(/loopback/); // the server is not allowlisted
  });
});
