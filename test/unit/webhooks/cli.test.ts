/** `signal-kit webhooks` flag and environment parsing: every mistake names its flag or variable, before any I/O. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/args.ts';
import { describeApiError, manageAction, parseServe } from '../../../cli/commands/webhooks.ts';
import { DEFAULT_TOKEN_HEADER, receiverAuthFromEnv } from '../../../config/webhooks.ts';
import { ConfigError } from '../../../config/worker.ts';
import { NotFoundError, ValidationError } from '../../../connectors/errors.ts';
import { generateWebhookSecret } from '../../../connectors/webhooks/signature.ts';

describe('webhooks serve flags', () => {
  it('defaults to signatures on 127.0.0.1 at /webhooks', () => {
    expect(parseServe({ port: '8080' })).toEqual({
      port: 8080,
      host: '127.0.0.1',
      path: '/webhooks',
      auth: 'signature',
      allowUnauthenticated: false,
    });
    expect(parseServe({ port: '0', auth: 'none', allowUnauthenticated: true })).toMatchObject({
      auth: 'none',
      allowUnauthenticated: true,
    });
  });

  it.each([
    [{}, /--port is required/],
    [{ port: '70000' }, /--port must be an integer/],
    [{ port: '-1' }, /--port must be an integer/],
    [{ port: '1', auth: 'hmac' }, /--auth must be one of signature, token, none/],
    [{ port: '1', auth: 'none' }, /--allow-unauthenticated/],
    [{ port: '1', allowUnauthenticated: true }, /--allow-unauthenticated applies only to --auth none/],
    [{ port: '1', path: 'hooks' }, /--path must be an absolute URL path/],
  ])('refuses %j', (flags, message) => {
    expect(() => parseServe(flags)).toThrow(UsageError);
    expect(() => parseServe(flags)).toThrow(message);
  });
});

describe('webhooks serve environment', () => {
  it('reads several secrets (rotation) and a tolerance', () => {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    expect(
      receiverAuthFromEnv('signature', {
        SIGNAL_KIT_WEBHOOK_SECRETS: ` ${a}, ${b} `,
        SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS: '60',
      }),
    ).toEqual({ kind: 'standard-webhooks', secrets: [a, b], toleranceSeconds: 60 });
  });

  it('reads a token and its header', () => {
    const token = 'a-token-of-enough-length';
    expect(receiverAuthFromEnv('token', { SIGNAL_KIT_WEBHOOK_TOKEN: token })).toEqual({
      kind: 'token',
      header: DEFAULT_TOKEN_HEADER,
      value: token,
    });
    expect(
      receiverAuthFromEnv('token', { SIGNAL_KIT_WEBHOOK_TOKEN: token, SIGNAL_KIT_WEBHOOK_TOKEN_HEADER: 'X-Hook-Auth' }),
    ).toMatchObject({ header: 'x-hook-auth' });
  });

  it.each([
    ['signature', {}, /SIGNAL_KIT_WEBHOOK_SECRETS is required/],
    ['signature', { SIGNAL_KIT_WEBHOOK_SECRETS: ' , ' }, /SIGNAL_KIT_WEBHOOK_SECRETS is required/],
    ['signature', { SIGNAL_KIT_WEBHOOK_SECRETS: 'whsec_!!!' }, /SIGNAL_KIT_WEBHOOK_SECRETS must be whsec_/],
    [
      'signature',
      { SIGNAL_KIT_WEBHOOK_SECRETS: generateWebhookSecret(), SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS: 'soon' },
      /SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS/,
    ],
    ['token', {}, /SIGNAL_KIT_WEBHOOK_TOKEN is required/],
    ['token', { SIGNAL_KIT_WEBHOOK_TOKEN: 'short' }, /SIGNAL_KIT_WEBHOOK_TOKEN must be at least 16/],
    [
      'token',
      { SIGNAL_KIT_WEBHOOK_TOKEN: 'a-token-of-enough-length', SIGNAL_KIT_WEBHOOK_TOKEN_HEADER: 'x bad' },
      /SIGNAL_KIT_WEBHOOK_TOKEN_HEADER must be an HTTP header name/,
    ],
  ] as const)('%s with %j is a ConfigError', (mode, env, message) => {
    expect(() => receiverAuthFromEnv(mode, env)).toThrow(ConfigError);
    expect(() => receiverAuthFromEnv(mode, env)).toThrow(message);
  });

  it('never repeats a secret in an error', () => {
    const leaked = 'whsec_c2VjcmV0!';
    let message = '';
    try {
      receiverAuthFromEnv('signature', { SIGNAL_KIT_WEBHOOK_SECRETS: leaked });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/SIGNAL_KIT_WEBHOOK_SECRETS/);
    expect(message).not.toContain('c2VjcmV0');
  });
});

describe('webhooks subscription flags', () => {
  // Which flags and arguments each subcommand takes is commander's to check (test/unit/cli/help.test.ts).
  it.each([
    ['subscribe', undefined, { types: 'news' }, /--url is required/],
    ['subscribe', undefined, { url: 'http://a.example/x' }, /--types is required/],
    ['subscribe', undefined, { url: 'mailto:a@b.c', types: 'news' }, /--url must be an absolute http\(s\) URL/],
    ['subscribe', undefined, { url: 'http://a.example/x', types: ' , ' }, /--types must name at least one/],
    ['update', undefined, { status: 'paused' }, /usage: signal-kit webhooks update ID/],
    ['update', 'wh_1', {}, /at least one of --url, --types, --description, --status/],
    ['update', 'wh_1', { status: 'stopped' }, /--status must be active or paused/],
    ['delete', undefined, {}, /usage: signal-kit webhooks delete ID/],
  ] as const)('%s %s %j', (sub, id, flags, message) => {
    expect(() => manageAction(sub, id, flags)).toThrow(UsageError);
    expect(() => manageAction(sub, id, flags)).toThrow(message);
  });

  it('names the flag of a field the service refused', () => {
    const refused = new ValidationError({
      status: 422,
      code: 'validation_error',
      message: 'signal_types.0: unknown signal type',
      field: 'signal_types.0',
      requestId: 'req_1',
    });
    expect(describeApiError(refused)).toBe(
      '--types: signal_types.0: unknown signal type (HTTP 422, validation_error, request req_1)',
    );
    const missing = new NotFoundError({
      status: 404,
      code: 'not_found',
      message: 'DELETE failed with 404: no webhook',
    });
    expect(describeApiError(missing)).toBe('DELETE failed with 404: no webhook (not_found)');
  });
});
