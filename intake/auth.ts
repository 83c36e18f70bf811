/**
 * Who may post events: Standard Webhooks signatures (checked on the raw body), a shared token in a header (checked
 * before the body is read), or nobody checked at all when the caller says so explicitly.
 */

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Rejection, WebhookVerificationError } from '../connectors/errors.ts';
import { DEFAULT_TOLERANCE_SECONDS, decodeWebhookSecret, verifyWebhook } from '../connectors/webhooks/signature.ts';
import type { ReceiverAuth } from './options.ts';

export interface AuthCheck {
  /** Before the body is read: a token auth's header (401 when missing or wrong). */
  beforeBody(req: IncomingMessage): void;
  /** On the raw body: a Standard Webhooks signature and its timestamp (401 when invalid or stale). */
  onBody(req: IncomingMessage, body: Buffer): void;
}

/** Refuses, at start, an auth that cannot work (no secret, a short token, `none` without saying so). */
export function validateAuth(auth: ReceiverAuth, allowUnauthenticated: boolean | undefined): void {
  switch (auth.kind) {
    case 'standard-webhooks':
      if (!auth.secrets.length) throw new TypeError('standard-webhooks auth needs at least one secret');
      for (const s of auth.secrets) decodeWebhookSecret(s);
      return;
    case 'token': {
      const values = typeof auth.value === 'string' ? [auth.value] : auth.value;
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(auth.header)) throw new TypeError('token auth needs a header name');
      if (!values.length || values.some((v) => v.length < 16)) {
        throw new TypeError('token auth needs token values of at least 16 characters');
      }
      return;
    }
    case 'none':
      if (allowUnauthenticated !== true) {
        throw new TypeError("auth 'none' accepts unauthenticated events; pass allowUnauthenticated: true to mean it");
      }
      return;
    default:
      throw new TypeError(`unknown auth kind ${(auth as { kind: unknown }).kind}`);
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // Compare equal lengths only, and always do one comparison so timing does not reveal where they differ.
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

function signatureRejectionCode(reason: WebhookVerificationError['reason']): string {
  if (reason === 'missing_headers') return 'missing_signature';
  if (reason === 'no_matching_signature' || reason === 'invalid_signature_format') return 'invalid_signature';
  if (reason === 'invalid_timestamp') return 'invalid_timestamp';
  return 'stale_timestamp';
}

export function createAuthCheck(auth: ReceiverAuth, now: () => Date): AuthCheck {
  const tokenValues = auth.kind === 'token' ? (typeof auth.value === 'string' ? [auth.value] : [...auth.value]) : [];
  return {
    beforeBody(req) {
      if (auth.kind !== 'token') return;
      const raw = req.headers[auth.header.toLowerCase()];
      const presented = Array.isArray(raw) ? raw[0] : raw;
      if (!presented) throw new Rejection(401, 'missing_token', `missing header ${auth.header}`);
      let ok = false;
      for (const value of tokenValues) if (safeEqual(presented, value)) ok = true;
      if (!ok) throw new Rejection(401, 'invalid_token', `header ${auth.header} does not hold a valid token`);
    },
    onBody(req, body) {
      if (auth.kind !== 'standard-webhooks') return;
      try {
        verifyWebhook({
          headers: req.headers,
          body,
          secrets: auth.secrets,
          toleranceSeconds: auth.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
          now: now(),
        });
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        throw new Rejection(401, signatureRejectionCode(err.reason), err.message);
      }
    },
  };
}
