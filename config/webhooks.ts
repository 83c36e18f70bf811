/**
 * The webhook settings. The worker's delivery: `SIGNAL_KIT_WEBHOOK_DESTINATIONS`, `SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL`
 * and `SIGNAL_KIT_WEBHOOK_ALLOWLIST` (their shapes: config/webhook-destinations.ts), and `SIGNAL_KIT_NOTIFY_SECRET`
 * (whsec_..., what a schedule's `--notify` events are signed with); the destinations and their
 * secrets stay in worker configuration, workflows only ever see destination ids, kinds and filters. The intake's
 * authentication (`webhooks serve`): `SIGNAL_KIT_WEBHOOK_SECRETS` or `SIGNAL_KIT_WEBHOOK_TOKEN` (and their options).
 */
import { z } from 'zod';
import { ConfigError, WebhookConfigError } from '../connectors/errors.ts';
import { parseStorageUrl } from '../connectors/storage/url.ts';
import type { WebhookDeliveryConfig } from '../connectors/webhooks/destinations.ts';
import { AddressAllowlist } from '../connectors/webhooks/safe-dispatcher.ts';
import { isWebhookSecret } from '../connectors/webhooks/signature.ts';
import type { ReceiverAuth } from '../intake/options.ts';
import { webhookDeliveryConfigFromEnv } from './webhook-destinations.ts';

type Env = Record<string, string | undefined>;

/**
 * Reads and checks the webhook variables before anything starts: a mistake is a `ConfigError` naming the variable.
 * No variable set means no destinations (events are acknowledged and delivered nowhere).
 */
export function parseWebhookDeliveryConfig(env: Env = process.env): WebhookDeliveryConfig {
  let config: WebhookDeliveryConfig;
  try {
    config = webhookDeliveryConfigFromEnv(env);
  } catch (error) {
    if (!(error instanceof WebhookConfigError)) throw error;
    const name = 'SIGNAL_KIT_WEBHOOK_DESTINATIONS';
    throw new ConfigError(error.message.includes(name) ? error.message : `${name}: ${error.message}`);
  }
  try {
    new AddressAllowlist(config.allowlist);
  } catch (error) {
    throw new ConfigError(`SIGNAL_KIT_WEBHOOK_ALLOWLIST: ${(error as Error).message}`);
  }
  checkStorageUrl('SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL', config.deadLetterUrl);
  if (config.notifySecrets?.some((secret) => !isWebhookSecret(secret)))
    throw new ConfigError('SIGNAL_KIT_NOTIFY_SECRET: must be whsec_<base64> (comma-separated for several)');
  config.destinations.forEach((destination, index) => {
    if (destination.kind === 'bucket') checkStorageUrl(`SIGNAL_KIT_WEBHOOK_DESTINATIONS ${index}.url`, destination.url);
  });
  return config;
}

function checkStorageUrl(name: string, url: string): void {
  try {
    parseStorageUrl(url);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

// ─── the intake's authentication (`webhooks serve`) ────────────────────────────────────────────────────────────

/** How the intake authenticates senders: Standard Webhooks signatures, a shared token header, or not at all. */
export type ServeAuthMode = 'signature' | 'token' | 'none';

export const DEFAULT_TOKEN_HEADER = 'x-webhook-token';

const whsecSecret = z
  .string()
  .refine(isWebhookSecret, { message: 'must be whsec_<base64> (comma-separated for several)' });

const commaList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const signatureEnvSchema = z.object({
  SIGNAL_KIT_WEBHOOK_SECRETS: z
    .string({ message: 'is required for --auth signature (comma-separated whsec_... secrets)' })
    .transform(commaList)
    .pipe(z.array(whsecSecret).min(1, 'is required for --auth signature (comma-separated whsec_... secrets)')),
  SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().positive().max(86_400).optional(),
});

const tokenEnvSchema = z.object({
  SIGNAL_KIT_WEBHOOK_TOKEN: z
    .string({ message: 'is required for --auth token' })
    .min(16, 'must be at least 16 characters'),
  SIGNAL_KIT_WEBHOOK_TOKEN_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name')
    .default(DEFAULT_TOKEN_HEADER),
});

function parseEnv<T extends z.ZodType>(schema: T, env: Env): z.output<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  // Messages name the variable and never repeat its value (a secret).
  const problems = result.error.issues.map((issue) => `${String(issue.path[0] ?? '(root)')} ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${[...new Set(problems)].join('; ')}`);
}

/** The receiver's authentication from the environment, checked before anything starts. */
export function receiverAuthFromEnv(mode: ServeAuthMode, env: Env = process.env): ReceiverAuth {
  switch (mode) {
    case 'signature': {
      const c = parseEnv(signatureEnvSchema, env);
      return {
        kind: 'standard-webhooks',
        secrets: c.SIGNAL_KIT_WEBHOOK_SECRETS,
        ...(c.SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS ? { toleranceSeconds: c.SIGNAL_KIT_WEBHOOK_TOLERANCE_SECONDS } : {}),
      };
    }
    case 'token': {
      const c = parseEnv(tokenEnvSchema, env);
      return {
        kind: 'token',
        header: c.SIGNAL_KIT_WEBHOOK_TOKEN_HEADER.toLowerCase(),
        value: c.SIGNAL_KIT_WEBHOOK_TOKEN,
      };
    }
    case 'none':
      return { kind: 'none' };
  }
}
