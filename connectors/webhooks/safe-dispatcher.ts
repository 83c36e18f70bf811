/**
 * An SSRF guard for outbound webhook deliveries.
 *
 * `createSafeDispatcher()` returns an undici `Agent` whose connector resolves the destination host itself, checks
 * every resolved address against the blocked ranges (loopback, private, link-local and cloud metadata, CGNAT,
 * unspecified, multicast, reserved, and the IPv4-mapped / NAT64 (well-known and local-use) / 6to4 / Teredo IPv6
 * forms of all of them) unless an
 * allowlist CIDR admits it, and then connects to exactly the address it checked. Because the check happens inside
 * the connector, on the address the socket will use, a DNS answer that changes between a pre-check and the
 * connect (DNS rebinding) cannot slip through. A refusal is a `DestinationBlockedError`, raised before any socket
 * exists.
 *
 * undici's `request()` / `Agent.dispatch()` never follow redirects unless a redirect interceptor is composed in,
 * and none is: a 3xx is returned as-is. (With `fetch`, pass `redirect: 'manual'`.)
 */

import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { DestinationBlockedError, DestinationUnresolvableError } from '../errors.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses. Injectable so tests never touch DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

/** Every range a destination may not resolve into (unless allowlisted): network, prefix length, what it is. */
const BLOCKED: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / cloud metadata'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved / broadcast'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['100::', 64, 'discard-only'],
  // Local-use NAT64 (RFC 8215): the operator picks where the IPv4 sits; only the /96 form is decoded, the rest of the
  // prefix could translate to any IPv4 address and is refused.
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

interface RangeRule {
  list: BlockList;
  label: string;
}

/** The blocked ranges of one address family, in table order (the first match names the range). */
function rules(family: 'ipv4' | 'ipv6'): RangeRule[] {
  return BLOCKED.filter(([net]) => (net.includes(':') ? 'ipv6' : 'ipv4') === family).map(([net, prefix, label]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return { list, label: `${label} (${net}/${prefix})` };
  });
}

const V4_RULES = rules('ipv4');
const LOCAL_NAT64_96 = new BlockList();
LOCAL_NAT64_96.addSubnet('64:ff9b:1::', 96, 'ipv6');
const V6_RULES = rules('ipv6');

/** Expands an IPv6 address to its eight 16-bit groups (handles `::` and an embedded dotted IPv4 tail). */
function ipv6Groups(address: string): number[] {
  let addr = address.toLowerCase();
  const zone = addr.indexOf('%');
  if (zone >= 0) addr = addr.slice(0, zone);
  let tail: number[] = [];
  const lastColon = addr.lastIndexOf(':');
  const maybeV4 = addr.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const o = maybeV4.split('.').map(Number);
    tail = [((o[0]! << 8) | o[1]!) & 0xffff, ((o[2]! << 8) | o[3]!) & 0xffff];
    addr = `${addr.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = addr.includes('::') ? addr.split('::') : [addr, undefined];
  const h = head ? head.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const groups = rest === undefined ? h : [...h, ...new Array(8 - h.length - r.length).fill(0), ...r];
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

function v4FromGroups(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/**
 * The IPv4 addresses an IPv6 address carries, for the forms that route to them: IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and local-use `64:ff9b:1::/96`, 6to4
 * `2002:AABB:CCDD::/48`, IPv4-compatible `::a.b.c.d`, and Teredo `2001:0::/32` (its server and, stored inverted,
 * its client: traffic reaches both).
 */
export function embeddedIPv4s(address: string): string[] {
  if (isIP(address.split('%')[0]!) !== 6) return [];
  const g = ipv6Groups(address);
  if (g.length !== 8) return [];
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return [v4FromGroups(g[6]!, g[7]!)];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [v4FromGroups(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [v4FromGroups(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1 && zeros(3, 6)) return [v4FromGroups(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [v4FromGroups(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) {
    return [v4FromGroups(g[2]!, g[3]!), v4FromGroups(~g[6]! & 0xffff, ~g[7]! & 0xffff)];
  }
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return [v4FromGroups(g[6]!, g[7]!)];
  return [];
}

/** The first IPv4 address an IPv6 address carries (see embeddedIPv4s). */
export function embeddedIPv4(address: string): string | undefined {
  return embeddedIPv4s(address)[0];
}

/** A parsed allowlist: CIDRs (`127.0.0.1/32`, `::1/128`, `10.1.0.0/16`) or bare addresses. */
export class AddressAllowlist {
  readonly entries: readonly string[];
  readonly #list = new BlockList();
  constructor(cidrs: readonly string[] = []) {
    this.entries = [...cidrs];
    for (const entry of cidrs) {
      const [net, prefixText, ...extra] = entry.trim().split('/');
      const family = isIP(net ?? '');
      if (!net || family === 0 || extra.length) throw new TypeError(`invalid allowlist entry: ${entry}`);
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new TypeError(`invalid allowlist prefix: ${entry}`);
      }
      this.#list.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }
  allows(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    if (this.#list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    // The IPv6 forms of an allowlisted IPv4 range (mapped, NAT64, 6to4...) are allowed when every IPv4 they carry is.
    const v4s = family === 6 ? embeddedIPv4s(address) : [];
    return v4s.length > 0 && v4s.every((v4) => this.#list.check(v4, 'ipv4'));
  }
}

/**
 * Why an address is refused, or `undefined` if it may be reached. The allowlist wins over every blocked range.
 */
export function blockedRange(address: string, allowlist?: AddressAllowlist): string | undefined {
  const bare = address.split('%')[0]!;
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  if (allowlist?.allows(bare)) return undefined;
  if (family === 4) return V4_RULES.find((r) => r.list.check(bare, 'ipv4'))?.label;
  const v4s = embeddedIPv4s(bare);
  for (const v4 of v4s) {
    const inner = V4_RULES.find((r) => r.list.check(v4, 'ipv4'))?.label;
    if (inner) return `${inner} via IPv6 ${bare}`;
  }
  // The local-use NAT64 /96 form carrying a public IPv4 is judged by that IPv4; the rest of its /48 stays refused.
  if (v4s.length > 0 && LOCAL_NAT64_96.check(bare, 'ipv6')) return undefined;
  return V6_RULES.find((r) => r.list.check(bare, 'ipv6'))?.label;
}

export interface SafeConnectorOptions {
  /** CIDRs that may be reached even though they are in a blocked range (tests: `['127.0.0.1/32']`). */
  allowlist?: readonly string[];
  /** Host name resolution; the default is the system resolver (`dns.lookup`, all addresses). */
  resolver?: Resolver;
  /** TCP+TLS connect timeout in milliseconds (default 10 000). */
  connectTimeoutMs?: number;
  /** Called with every destination that is refused (for metrics or logs). */
  onBlocked?: (error: DestinationBlockedError) => void;
  /** The connector that opens the socket once the address is approved (default: undici's `buildConnector`). */
  baseConnector?: buildConnector.connector;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Resolves `hostname`, refuses it if any of its addresses is blocked, and otherwise returns the address to connect
 * to (the first one). Every address is checked so that a name answering with a public and a private address is
 * refused no matter which one a later connect would pick.
 */
export async function resolveSafeAddress(
  hostname: string,
  { allowlist, resolver = systemResolver }: { allowlist?: AddressAllowlist; resolver?: Resolver } = {},
): Promise<ResolvedAddress> {
  const host = unbracket(hostname);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolver(host);
    } catch (err) {
      throw new DestinationUnresolvableError(host, err);
    }
    if (addresses.length === 0) throw new DestinationUnresolvableError(host);
  }
  for (const { address } of addresses) {
    const range = blockedRange(address, allowlist);
    if (range !== undefined) throw new DestinationBlockedError(host, address, range);
  }
  return addresses[0]!;
}

/** An undici connector that resolves, checks, and connects to the checked address only. */
export function createSafeConnector(options: SafeConnectorOptions = {}): buildConnector.connector {
  const allowlist = new AddressAllowlist(options.allowlist ?? []);
  const base = options.baseConnector ?? buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  return (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname);
    resolveSafeAddress(host, { allowlist, ...(options.resolver ? { resolver: options.resolver } : {}) }).then(
      ({ address }) => {
        // Connect to the checked address. Over TLS keep the name for SNI and the certificate check; over plain
        // HTTP pass no servername (undici would otherwise re-resolve through it).
        const tls = connectOptions.protocol === 'https:';
        const servername = tls ? (connectOptions.servername ?? (isIP(host) === 0 ? host : undefined)) : undefined;
        const { servername: _ignored, ...rest } = connectOptions;
        base({ ...rest, hostname: address, ...(servername ? { servername } : {}) }, callback);
      },
      (err: unknown) => {
        if (err instanceof DestinationBlockedError) options.onBlocked?.(err);
        callback(err instanceof Error ? err : new Error(String(err)), null);
      },
    );
  };
}

export interface SafeDispatcherOptions extends SafeConnectorOptions {
  /** Passed to the Agent (timeouts, connections, keep-alive...). `connect` is always ours. */
  agentOptions?: Omit<Agent.Options, 'connect'>;
}

/** An undici Agent that only reaches approved addresses. Use it as `dispatcher` with `request()`. */
export function createSafeDispatcher(options: SafeDispatcherOptions = {}): Agent {
  return new Agent({ ...options.agentOptions, connect: createSafeConnector(options) });
}
