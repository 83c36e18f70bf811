import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DestinationBlockedError, DestinationUnresolvableError } from '../../../connectors/errors.ts';
import {
  AddressAllowlist,
  blockedRange,
  createSafeDispatcher,
  embeddedIPv4,
  type Resolver,
} from '../../../connectors/webhooks/safe-dispatcher.ts';

// ---- the guard: no test may open a socket to anything but 127.0.0.1 ---------------------------------------------

const attempts: string[] = [];
const violations: string[] = [];
const realConnect = net.Socket.prototype.connect;

function targetOf(args: unknown[]): string {
  let first = args[0];
  if (Array.isArray(first)) first = first[0]; // net.connect passes its normalized [options, cb]
  if (typeof first === 'object' && first !== null) {
    const o = first as { host?: string; path?: string; lookup?: unknown };
    if (o.path) return `unix:${o.path}`;
    if (o.lookup) return `lookup:${o.host}`; // a custom lookup could go anywhere: treat as a violation
    return o.host ?? 'localhost';
  }
  if (typeof first === 'number') return typeof args[1] === 'string' ? args[1] : 'localhost';
  return String(first);
}

beforeEach(() => {
  attempts.length = 0;
  violations.length = 0;
  vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    const target = targetOf(args);
    attempts.push(target);
    if (target !== '127.0.0.1') {
      violations.push(target);
      throw new Error(`test guard: refused a connect to ${target}`);
    }
    return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  expect(violations, 'a connect to a non-loopback address was attempted').toEqual([]);
});

// ---- a local server that records what reaches it ----------------------------------------------------------------

let server: Server;
let port: number;
const received: Array<{ method: string; url: string; host: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host });
    req.resume();
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function fixedResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = (async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? (6 as const) : (4 as const) }));
  }) as Resolver & { calls: string[] };
  fn.calls = calls;
  return fn;
}

async function refused(url: string, dispatcher: ReturnType<typeof createSafeDispatcher>): Promise<unknown> {
  try {
    const res = await request(url, { method: 'POST', body: '{}', dispatcher });
    await res.body.dump();
  } catch (err) {
    return err;
  }
  throw new Error(`expected ${url} to be refused`);
}

describe('the test guard', () => {
  it('intercepts a connect to a non-loopback address before any packet is sent', () => {
    expect(() => net.connect({ host: '10.255.255.1', port: 9 })).toThrow(/test guard/);
    expect(violations).toEqual(['10.255.255.1']);
    violations.length = 0; // expected here; any other test that does this fails in afterEach
  });
});

describe('blockedRange', () => {
  it.each([
    ['10.0.0.1', /private/],
    ['10.255.255.255', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.254', /private/],
    ['192.168.1.1', /private/],
    ['127.0.0.1', /loopback/],
    ['127.8.9.10', /loopback/],
    ['169.254.169.254', /link-local/],
    ['0.0.0.0', /unspecified/],
    ['100.64.0.1', /carrier-grade/],
    ['100.127.255.254', /carrier-grade/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /reserved/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['::ffff:127.0.0.1', /loopback.*via IPv6/],
    ['::ffff:7f00:1', /loopback.*via IPv6/],
    ['::ffff:a9fe:a9fe', /link-local.*via IPv6/],
    ['::ffff:10.0.0.1', /private.*via IPv6/],
    ['0:0:0:0:0:ffff:c0a8:0101', /private.*via IPv6/],
    ['64:ff9b::a9fe:a9fe', /link-local.*via IPv6/],
    ['2002:7f00:1::', /loopback.*via IPv6/],
    ['::127.0.0.1', /loopback.*via IPv6/],
  ])('refuses %s', (address, pattern) => {
    expect(blockedRange(address)).toMatch(pattern);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:0808:0808::1',
  ])('allows the public address %s', (address) => {
    expect(blockedRange(address)).toBeUndefined();
  });

  it('lets an allowlist admit a blocked range, in both IPv4 and mapped IPv6 forms', () => {
    const allow = new AddressAllowlist(['127.0.0.1/32', '10.20.0.0/16', '::1']);
    expect(blockedRange('127.0.0.1', allow)).toBeUndefined();
    expect(blockedRange('::ffff:127.0.0.1', allow)).toBeUndefined();
    expect(blockedRange('::1', allow)).toBeUndefined();
    expect(blockedRange('10.20.3.4', allow)).toBeUndefined();
    expect(blockedRange('127.0.0.2', allow)).toMatch(/loopback/);
    expect(blockedRange('10.21.0.1', allow)).toMatch(/private/);
    expect(() => new AddressAllowlist(['not-an-ip'])).toThrow(TypeError);
    expect(() => new AddressAllowlist(['10.0.0.0/33'])).toThrow(TypeError);
  });

  it('extracts IPv4 from mapped, NAT64 and 6to4 forms only', () => {
    expect(embeddedIPv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('64:ff9b::102:304')).toBe('1.2.3.4');
    expect(embeddedIPv4('2002:102:304::9')).toBe('1.2.3.4');
    expect(embeddedIPv4('2606:4700::1')).toBeUndefined();
    expect(embeddedIPv4('1.2.3.4')).toBeUndefined();
  });
});

describe('createSafeDispatcher', () => {
  it('refuses a host resolving to 10.0.0.0/8 before any socket is opened', async () => {
    const resolver = fixedResolver({ 'crm.internal.example': ['10.1.2.3'] });
    const dispatcher = createSafeDispatcher({ resolver });
    const err = await refused('http://crm.internal.example/hook', dispatcher);
    expect(err).toBeInstanceOf(DestinationBlockedError);
    expect(err).toMatchObject({ host: 'crm.internal.example', address: '10.1.2.3', code: 'DESTINATION_BLOCKED' });
    expect((err as Error).message).toContain('crm.internal.example');
    expect((err as Error).message).toContain('10.1.2.3');
    expect(resolver.calls).toEqual(['crm.internal.example']);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('refuses the cloud metadata address, by name and as a literal', async () => {
    const dispatcher = createSafeDispatcher({ resolver: fixedResolver({ 'meta.example': ['169.254.169.254'] }) });
    expect(await refused('http://meta.example/latest/meta-data/', dispatcher)).toMatchObject({
      address: '169.254.169.254',
    });
    expect(await refused('http://169.254.169.254/latest/meta-data/', dispatcher)).toMatchObject({
      host: '169.254.169.254',
      address: '169.254.169.254',
    });
    expect(await refused('http://[::ffff:a9fe:a9fe]/', dispatcher)).toBeInstanceOf(DestinationBlockedError);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('refuses ::1, by name and as a literal', async () => {
    const dispatcher = createSafeDispatcher({ resolver: fixedResolver({ 'v6.example': ['::1'] }) });
    expect(await refused(`http://v6.example:${port}/`, dispatcher)).toMatchObject({ address: '::1' });
    expect(await refused(`http://[::1]:${port}/`, dispatcher)).toMatchObject({ address: '::1' });
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('refuses 127.0.0.1 without an allowlist, in every spelling, and the local server hears nothing', async () => {
    const before = received.length;
    const dispatcher = createSafeDispatcher({ resolver: fixedResolver({ 'hook.example': ['127.0.0.1'] }) });
    for (const url of [
      `http://hook.example:${port}/`,
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`, // the URL parser turns this into 127.0.0.1
      `http://0x7f.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://0.0.0.0:${port}/`,
    ]) {
      expect(await refused(url, dispatcher), url).toBeInstanceOf(DestinationBlockedError);
    }
    expect(attempts).toEqual([]);
    expect(received.length).toBe(before);
    await dispatcher.close();
  });

  it('refuses a name whose answers mix a public and a private address', async () => {
    const dispatcher = createSafeDispatcher({
      resolver: fixedResolver({ 'mixed.example': ['93.184.216.34', '192.168.0.10'] }),
    });
    expect(await refused('http://mixed.example/', dispatcher)).toMatchObject({ address: '192.168.0.10' });
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('reports a name that does not resolve, without connecting', async () => {
    const dispatcher = createSafeDispatcher({ resolver: fixedResolver({}) });
    expect(await refused('http://nowhere.example/', dispatcher)).toBeInstanceOf(DestinationUnresolvableError);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('with 127.0.0.1 allowlisted, the local server receives the request (by name and literal)', async () => {
    const blocked: DestinationBlockedError[] = [];
    const dispatcher = createSafeDispatcher({
      allowlist: ['127.0.0.1/32'],
      resolver: fixedResolver({ 'hook.example': ['127.0.0.1'] }),
      onBlocked: (e) => blocked.push(e),
    });
    const before = received.length;
    const res = await request(`http://hook.example:${port}/deliver`, { method: 'POST', body: '{}', dispatcher });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    const res2 = await request(`http://127.0.0.1:${port}/literal`, { method: 'POST', body: '{}', dispatcher });
    expect(res2.statusCode).toBe(200);
    await res2.body.dump();
    expect(received.slice(before)).toEqual([
      { method: 'POST', url: '/deliver', host: `hook.example:${port}` },
      { method: 'POST', url: '/literal', host: `127.0.0.1:${port}` },
    ]);
    expect(attempts.length).toBeGreaterThan(0);
    expect(new Set(attempts)).toEqual(new Set(['127.0.0.1']));
    // The allowlist is exact: ::1 stays refused.
    expect(await refused(`http://[::1]:${port}/`, dispatcher)).toBeInstanceOf(DestinationBlockedError);
    expect(blocked.map((b) => b.address)).toEqual(['::1']);
    await dispatcher.close();
  });

  it('checks every new connection, so a DNS answer that changes (rebinding) is caught at connect time', async () => {
    let call = 0;
    const resolver: Resolver = async () => {
      call++;
      return [{ address: call === 1 ? '127.0.0.1' : '10.0.0.7', family: 4 }];
    };
    const dispatcher = createSafeDispatcher({ allowlist: ['127.0.0.1/32'], resolver });
    const first = await request(`http://rebind.example:${port}/one`, {
      method: 'POST',
      body: '{}',
      dispatcher,
      reset: true,
    });
    expect(first.statusCode).toBe(200);
    await first.body.dump();
    const err = await refused(`http://rebind.example:${port}/two`, dispatcher);
    expect(err).toMatchObject({ host: 'rebind.example', address: '10.0.0.7' });
    expect(call).toBe(2);
    await dispatcher.close();
  });

  it('returns a 3xx as-is and never follows it', async () => {
    const dispatcher = createSafeDispatcher({ allowlist: ['127.0.0.1/32'] });
    const before = received.length;
    const res = await request(`http://127.0.0.1:${port}/redirect`, { method: 'POST', body: '{}', dispatcher });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('http://169.254.169.254/latest/meta-data/');
    await res.body.dump();
    expect(received.length).toBe(before + 1);
    expect(new Set(attempts)).toEqual(new Set(['127.0.0.1']));
    await dispatcher.close();
  });
});
