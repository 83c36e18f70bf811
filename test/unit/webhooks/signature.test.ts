import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../../connectors/errors.ts';
import {
  decodeWebhookSecret,
  generateWebhookId,
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
} from '../../../connectors/webhooks/signature.ts';

const body = JSON.stringify({ event: 'signal.created', signal: { id: 'a1', title: 'Ünïcode ✓' } });

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
  return undefined;
}

describe('signWebhook / verifyWebhook', () => {
  it('agrees with the standardwebhooks package: our signature verifies there', () => {
    const secret = generateWebhookSecret();
    const now = new Date();
    const headers = signWebhook({ id: 'msg_1', timestamp: now, body, secret });
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const wh = new Webhook(secret);
    expect(wh.verify(body, { ...headers })).toEqual(JSON.parse(body));
    // The reference produces the identical string.
    expect(wh.sign('msg_1', now, body)).toBe(headers['webhook-signature']);
  });

  it('agrees with the standardwebhooks package: its signature verifies here', () => {
    const secret = `whsec_${Buffer.from('a shared secret of some length!!').toString('base64')}`;
    const wh = new Webhook(secret);
    const now = new Date();
    const signature = wh.sign('msg_ref', now, body);
    const result = verifyWebhook({
      headers: {
        'Webhook-Id': 'msg_ref',
        'Webhook-Timestamp': String(Math.floor(now.getTime() / 1000)),
        'Webhook-Signature': signature,
      },
      body,
      secrets: [secret],
    });
    expect(result.id).toBe('msg_ref');
    expect(result.secretIndex).toBe(0);
    expect(result.timestamp.getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000);
  });

  it('accepts a timestamp in seconds, Buffer bodies and fetch Headers', () => {
    const secret = generateWebhookSecret(24);
    const headers = signWebhook({ id: 'msg_2', timestamp: 1_700_000_000, body: Buffer.from(body), secret });
    expect(headers['webhook-timestamp']).toBe('1700000000');
    const now = new Date(1_700_000_100_000);
    expect(verifyWebhook({ headers: new Headers({ ...headers }), body, secrets: secret, now }).id).toBe('msg_2');
    expect(verifyWebhook({ headers, body: new TextEncoder().encode(body), secrets: secret, now }).id).toBe('msg_2');
  });

  it('accepts any of several secrets (rotation) and any of several signatures', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const other = generateWebhookSecret();
    const now = new Date();
    const signedOld = signWebhook({ id: 'msg_3', timestamp: now, body, secret: oldSecret });
    expect(verifyWebhook({ headers: signedOld, body, secrets: [newSecret, oldSecret] }).secretIndex).toBe(1);

    // The sender signs with two secrets; a receiver that knows only one of them accepts.
    const signedBoth = signWebhook({ id: 'msg_3', timestamp: now, body, secret: [oldSecret, newSecret] });
    expect(signedBoth['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook({ headers: signedBoth, body, secrets: [newSecret] }).secretIndex).toBe(0);
    expect(new Webhook(newSecret).verify(body, { ...signedBoth })).toEqual(JSON.parse(body));

    // Unknown schemes and garbage next to a good signature are ignored.
    const mixed = {
      ...signedOld,
      'webhook-signature': `v1a,AAAA v2,zzz v1,${'A'.repeat(44)} ${signedOld['webhook-signature']}`,
    };
    expect(verifyWebhook({ headers: mixed, body, secrets: oldSecret }).id).toBe('msg_3');
    expect(reason(() => verifyWebhook({ headers: signedOld, body, secrets: [other] }))).toBe('no_matching_signature');
  });

  it('rejects a tampered body, a tampered id or timestamp, and a wrong secret', () => {
    const secret = generateWebhookSecret();
    const now = new Date();
    const headers = signWebhook({ id: 'msg_4', timestamp: now, body, secret });
    expect(reason(() => verifyWebhook({ headers, body: `${body} `, secrets: secret }))).toBe('no_matching_signature');
    expect(reason(() => verifyWebhook({ headers: { ...headers, 'webhook-id': 'msg_5' }, body, secrets: secret }))).toBe(
      'no_matching_signature',
    );
    const ts = String(Number(headers['webhook-timestamp']) + 1);
    expect(
      reason(() => verifyWebhook({ headers: { ...headers, 'webhook-timestamp': ts }, body, secrets: secret })),
    ).toBe('no_matching_signature');
    expect(reason(() => verifyWebhook({ headers, body, secrets: generateWebhookSecret() }))).toBe(
      'no_matching_signature',
    );
    // And the reference rejects a body we signed and someone altered.
    expect(() => new Webhook(secret).verify(`${body}x`, { ...headers })).toThrow();
  });

  it('rejects stale and future timestamps outside the tolerance, accepts inside', () => {
    const secret = generateWebhookSecret();
    const now = new Date('2026-03-01T12:00:00Z');
    const at = (offsetS: number) =>
      signWebhook({ id: 'msg_6', timestamp: new Date(now.getTime() + offsetS * 1000), body, secret });
    expect(reason(() => verifyWebhook({ headers: at(-301), body, secrets: secret, now }))).toBe('timestamp_too_old');
    expect(reason(() => verifyWebhook({ headers: at(301), body, secrets: secret, now }))).toBe('timestamp_too_new');
    expect(verifyWebhook({ headers: at(-300), body, secrets: secret, now }).id).toBe('msg_6');
    expect(verifyWebhook({ headers: at(300), body, secrets: secret, now }).id).toBe('msg_6');
    expect(reason(() => verifyWebhook({ headers: at(-60), body, secrets: secret, now, toleranceSeconds: 30 }))).toBe(
      'timestamp_too_old',
    );
    // Our stale message is also refused by the reference.
    const stale = signWebhook({ id: 'msg_6', timestamp: new Date(Date.now() - 600_000), body, secret });
    expect(() => new Webhook(secret).verify(body, { ...stale })).toThrow(/too old/);
  });

  it('rejects missing headers and a malformed timestamp or signature', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ id: 'msg_7', timestamp: new Date(), body, secret });
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const partial: Record<string, string> = { ...headers };
      delete partial[name];
      expect(reason(() => verifyWebhook({ headers: partial, body, secrets: secret }))).toBe('missing_headers');
    }
    expect(reason(() => verifyWebhook({ headers: {}, body, secrets: secret }))).toBe('missing_headers');
    expect(
      reason(() => verifyWebhook({ headers: { ...headers, 'webhook-timestamp': '12abc' }, body, secrets: secret })),
    ).toBe('invalid_timestamp');
    expect(
      reason(() => verifyWebhook({ headers: { ...headers, 'webhook-signature': 'nonsense' }, body, secrets: secret })),
    ).toBe('invalid_signature_format');
  });

  it('makes secrets and ids of the documented shape and refuses bad secrets', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(decodeWebhookSecret(secret)).toHaveLength(32);
    expect(generateWebhookId()).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(() => decodeWebhookSecret('whsec_')).toThrow(TypeError);
    expect(() => decodeWebhookSecret('whsec_not base64!')).toThrow(TypeError);
    expect(() => signWebhook({ id: 'm', timestamp: new Date(), body, secret: [] })).toThrow(TypeError);
    // A secret without the prefix is the bare base64 key, as in the reference.
    const bare = secret.slice('whsec_'.length);
    const headers = signWebhook({ id: 'msg_8', timestamp: new Date(), body, secret: bare });
    expect(verifyWebhook({ headers, body, secrets: secret }).id).toBe('msg_8');
  });
});
