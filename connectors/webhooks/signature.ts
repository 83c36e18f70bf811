/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/).
 *
 * A message is signed as `v1,<base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>"))>`, where the key is
 * the base64-decoded part of a `whsec_<base64>` secret. The three headers travel with the body:
 *
 *   webhook-id:        msg_... (the same for every retry of one message, so receivers can dedupe)
 *   webhook-timestamp: integer seconds since the epoch
 *   webhook-signature: space-separated list of `v1,<base64>` (several during a secret rotation)
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from '../errors.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export type WebhookBody = string | Uint8Array;

/** Decodes a `whsec_<base64>` secret (the prefix is optional, as in the reference implementation). */
export function decodeWebhookSecret(secret: string): Buffer {
  if (typeof secret !== 'string') throw new TypeError('webhook secret must be a string');
  const b64 = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new TypeError('webhook secret must be whsec_<base64>');
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw new TypeError('webhook secret is empty');
  return key;
}

/** A fresh `whsec_<base64>` secret of `bytes` random bytes (default 32; Standard Webhooks asks for 24 to 64). */
/** Whether `secret` is a well-formed `whsec_<base64>` secret (the check config parsing shares). */
export function isWebhookSecret(secret: string): boolean {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  try {
    decodeWebhookSecret(secret);
    return true;
  } catch {
    return false;
  }
}

export function generateWebhookSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 24 || bytes > 64) throw new RangeError('secret size must be 24..64 bytes');
  return WEBHOOK_SECRET_PREFIX + randomBytes(bytes).toString('base64');
}

/** A fresh random message id (`msg_<32 hex digits>`). */
export function generateWebhookId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

function toSeconds(timestamp: Date | number): number {
  if (timestamp instanceof Date) {
    const ms = timestamp.getTime();
    if (!Number.isFinite(ms)) throw new TypeError('invalid timestamp');
    return Math.floor(ms / 1000);
  }
  if (!Number.isFinite(timestamp) || timestamp < 0) throw new TypeError('timestamp must be seconds since the epoch');
  return Math.floor(timestamp);
}

function hmac(key: Buffer, id: string, seconds: number | string, body: WebhookBody): string {
  const mac = createHmac('sha256', key);
  mac.update(`${id}.${seconds}.`);
  mac.update(body);
  return mac.digest('base64');
}

export interface SignWebhookInput {
  /** The message id; keep it stable across retries of one message. */
  id: string;
  /** A Date or integer seconds since the epoch. */
  timestamp: Date | number;
  /** The exact bytes that are sent. */
  body: WebhookBody;
  /** `whsec_<base64>`; several secrets produce several signatures (sender-side rotation). */
  secret: string | readonly string[];
}

export function signWebhook({ id, timestamp, body, secret }: SignWebhookInput): WebhookHeaders {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('webhook id must be a non-empty string');
  if (/\s/.test(id)) throw new TypeError('webhook id must not contain whitespace');
  const seconds = toSeconds(timestamp);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new TypeError('at least one secret is needed');
  const signatures = secrets.map((s) => `v1,${hmac(decodeWebhookSecret(s), id, seconds, body)}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': signatures.join(' '),
  };
}

/** Headers as node:http gives them, as a plain record, or as a fetch `Headers`. */
export type HeaderSource =
  | Headers
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(name: string): string | null }).get(name);
    return v ?? undefined;
  }
  const record = headers as unknown as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    for (const key of Object.keys(record)) {
      if (key.toLowerCase() === name) {
        value = record[key];
        break;
      }
    }
  }
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.join(' ');
}

export interface VerifyWebhookInput {
  headers: HeaderSource;
  /** The raw body bytes exactly as received (not re-serialized JSON). */
  body: WebhookBody;
  /** Every currently valid secret (during a rotation, the old and the new). */
  secrets: string | readonly string[];
  toleranceSeconds?: number;
  now?: Date;
}

export interface VerifiedWebhook {
  id: string;
  timestamp: Date;
  /** Index in `secrets` of the secret that matched (useful to retire an old secret). */
  secretIndex: number;
}

/**
 * Verifies a Standard Webhooks signature. Throws `WebhookVerificationError` on any failure. Replays inside the
 * tolerance window are not detected here: callers dedupe by `webhook-id` or, as the kit's receiver does, by a
 * workflow id derived from the event.
 */
export function verifyWebhook({
  headers,
  body,
  secrets,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  now = new Date(),
}: VerifyWebhookInput): VerifiedWebhook {
  const keys = (typeof secrets === 'string' ? [secrets] : [...secrets]).map(decodeWebhookSecret);
  if (keys.length === 0) throw new TypeError('at least one secret is needed');

  const id = headerValue(headers, 'webhook-id');
  const ts = headerValue(headers, 'webhook-timestamp');
  const sig = headerValue(headers, 'webhook-signature');
  if (!id || !ts || !sig) {
    const missing = [!id && 'webhook-id', !ts && 'webhook-timestamp', !sig && 'webhook-signature'].filter(Boolean);
    throw new WebhookVerificationError('missing_headers', `missing header(s): ${missing.join(', ')}`);
  }
  if (!/^\d{1,15}$/.test(ts.trim())) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not an integer number of seconds');
  }
  const seconds = Number(ts.trim());
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (nowSeconds - seconds > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_too_old', `webhook-timestamp is more than ${toleranceSeconds}s old`);
  }
  if (seconds - nowSeconds > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `webhook-timestamp is more than ${toleranceSeconds}s in the future`,
    );
  }

  const candidates: Buffer[] = [];
  for (const part of sig.split(' ')) {
    if (part === '') continue;
    const comma = part.indexOf(',');
    if (comma < 0) continue;
    if (part.slice(0, comma) !== 'v1') continue; // other schemes (v1a = ed25519) are not ours
    candidates.push(Buffer.from(part.slice(comma + 1), 'utf8'));
  }
  if (candidates.length === 0) {
    throw new WebhookVerificationError('invalid_signature_format', 'webhook-signature has no v1 signature');
  }

  // Compare every candidate with every key so the time taken does not depend on which one matches.
  let matched = -1;
  for (let k = 0; k < keys.length; k++) {
    const expected = Buffer.from(hmac(keys[k]!, id, seconds, body), 'utf8');
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected) && matched < 0) matched = k;
    }
  }
  if (matched < 0) throw new WebhookVerificationError('no_matching_signature', 'no signature matches any secret');
  return { id, timestamp: new Date(seconds * 1000), secretIndex: matched };
}
