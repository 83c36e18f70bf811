/**
 * Hostile requests from a seeded generator: malformed request lines, targets, header names and values, framing and
 * bodies. Each must get a 4xx, and the receiver must go on serving. A failing case prints its seed and bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../connectors/webhooks/signature.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../intake/index.ts';
import { seeded as seededRandom } from '../../../testkit/random.ts';
import { sendRaw } from './helpers.ts';

const SEED = 20261122;
const CASES = 300;
const PARALLEL = 8;

type Rand = () => number;
const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const bytes = (r: Rand, n: number, from = 0, to = 256) =>
  Buffer.from(Array.from({ length: n }, () => from + Math.floor(r() * (to - from))));

const BAD_TARGETS = [
  'http://[',
  'http://[::1',
  'https://[zz]/webhooks',
  'http://%zz/webhooks',
  'http://',
  'http:',
  '//webhooks',
  '*',
  '%',
  'webhooks',
  'ftp://host/webhooks',
  'http://a:b@[/x',
  '/webhooks/../../etc/passwd',
  '/\u00ff\u00fe',
  'http://host:99999/webhooks',
];
const CONTROL = ['\u0000', '\u0001', '\u0007', '\u001b', '\u007f'];

/** One request that the receiver must refuse with a 4xx (none of them is a valid, signed event). */
function malformedRequest(r: Rand, index: number): Buffer {
  const kind = index % 6;
  const head = (line: string, headers: string[], body = '') =>
    Buffer.from(`${line}\r\n${headers.join('\r\n')}${headers.length ? '\r\n' : ''}\r\n${body}`, 'latin1');
  const host = 'host: 127.0.0.1';
  switch (kind) {
    case 0: {
      // Request lines: garbage, missing parts, bad versions, control characters, spaces inside the target.
      const line = pick(r, [
        () => bytes(r, 1 + Math.floor(r() * 60), 33, 127).toString('latin1'),
        () => `${pick(r, ['GET', 'POST', 'PUT'])} /webhooks`,
        () => `POST /webhooks HTTP/${pick(r, ['9.9', '1', 'x.y', '1.1.1', ''])}`,
        () => `POST /web hooks HTTP/1.1`,
        () => `P${pick(r, CONTROL)}ST /webhooks HTTP/1.1`,
        () => `GET /healthz${pick(r, CONTROL)} HTTP/1.1`,
        () => `${'A'.repeat(1 + Math.floor(r() * 200))} / HTTP/1.1`,
      ])();
      return head(line, [host]);
    }
    case 1: {
      // Targets that are not a usable path.
      const method = pick(r, ['GET', 'POST', 'OPTIONS', 'DELETE']);
      return head(`${method} ${pick(r, BAD_TARGETS)} HTTP/1.1`, [host, 'content-length: 0']);
    }
    case 2: {
      // Header names with characters a token may not hold.
      const bad = pick(r, [' ', '(', ')', '"', '@', '\u0080', ...CONTROL, '{', ':']);
      const name = `x${bad}${bytes(r, 3, 97, 123).toString('latin1')}`;
      return head('POST /webhooks HTTP/1.1', [host, `${name}: v`, 'content-length: 0']);
    }
    case 3: {
      // Header values with control characters, and framing headers that contradict each other.
      return head(
        'POST /webhooks HTTP/1.1',
        pick(r, [
          [
            host,
            `webhook-id: a${pick(
              r,
              CONTROL.filter((c) => c !== '\u0000'),
            )}b`,
            'content-length: 0',
          ],
          [host, 'content-length: 5', 'content-length: 6', '', 'hello'],
          [host, `content-length: ${pick(r, ['-1', 'abc', '1e3', '0x10', '99999999999999999999'])}`],
          [host, 'transfer-encoding: chunked', 'content-length: 3'],
          [host, `transfer-encoding: ${pick(r, ['gzip', 'chunked, identity', 'x'])}`, 'content-length: 0'],
          [host, `x-long: ${'a'.repeat(20_000)}`],
        ]),
      );
    }
    case 4: {
      // Bodies: random bytes, broken or deep JSON, with and without (wrong) signatures, broken chunking.
      const body = pick(r, [
        () => bytes(r, Math.floor(r() * 300)),
        () => Buffer.from('{"event":"signal.created","signal":'),
        () => Buffer.from(`${'['.repeat(5_000)}${']'.repeat(5_000)}`),
        () => Buffer.from(JSON.stringify({ event: 'signal.created', signal: { id: '../x' } })),
      ])();
      const sign = r() < 0.5;
      const headers = [
        host,
        `content-type: ${pick(r, ['application/json', 'text/plain', 'application/json; charset=latin1'])}`,
        `content-length: ${body.length}`,
        ...(sign
          ? ['webhook-id: msg_1', `webhook-timestamp: ${Math.floor(Date.now() / 1000)}`, 'webhook-signature: v1,AAAA']
          : []),
      ];
      return Buffer.concat([head('POST /webhooks HTTP/1.1', headers), body]);
    }
    default: {
      const chunk = pick(r, ['zz\r\nabc\r\n0\r\n\r\n', '5\r\nab\r\n0\r\n\r\n', '-1\r\n\r\n', '3\r\nabc0\r\n\r\n']);
      return Buffer.from(
        `POST /webhooks HTTP/1.1\r\n${host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${chunk}`,
        'latin1',
      );
    }
  }
}

describe('webhook receiver under malformed requests (seeded fuzz)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver({
      auth: { kind: 'standard-webhooks', secrets: [generateWebhookSecret()] },
      enqueue: async () => undefined,
    });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it(`answers each of ${CASES} malformed requests with a 4xx and keeps serving /healthz`, async () => {
    const random = seededRandom(SEED);
    const requests = Array.from({ length: CASES }, (_, i) => malformedRequest(random, i));
    const failures: string[] = [];
    for (let i = 0; i < requests.length; i += PARALLEL) {
      const group = requests.slice(i, i + PARALLEL);
      const answers = await Promise.all(group.map((bytes) => sendRaw(receiver.port, bytes)));
      answers.forEach((answer, j) => {
        if (answer.status === undefined || answer.status < 400 || answer.status > 499) {
          failures.push(
            `case ${i + j} (seed ${SEED}): ${answer.status ?? 'no answer'} for ${JSON.stringify(group[j]!.toString('latin1').slice(0, 200))}`,
          );
        }
      });
    }
    expect(failures).toEqual([]);
    const health = await fetch(`${receiver.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
  });
});
