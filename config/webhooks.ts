/**
 * The worker's webhook delivery settings: `SIGNAL_KIT_WEBHOOK_DESTINATIONS`, `SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL` and
 * `SIGNAL_KIT_WEBHOOK_ALLOWLIST` (their shapes: connectors/webhooks/destinations.ts). The destinations and their
 * secrets stay in worker configuration; workflows only ever see destination ids, kinds and filters.
 */
import { parseStorageUrl } from '../connectors/storage/url.ts';
import {
  WebhookConfigError,
  type WebhookDeliveryConfig,
  webhookDeliveryConfigFromEnv,
} from '../connectors/webhooks/destinations.ts';
import { AddressAllowlist } from '../connectors/webhooks/safe-dispatcher.ts';
import { ConfigError } from './errors.ts';

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
