/**
 * The webhook activities of the main-queue worker: HTTP delivery (`createWebhookDeliveryActivities`) and the bucket
 * collector (`createCollectorActivities`), built from the worker's webhook configuration. The destinations and their
 * secrets stay here, in worker configuration; workflows only ever see destination ids, kinds and filters.
 */
import { createCollectorActivities } from '../activities/collector.ts';
import { createWebhookDeliveryActivities } from '../activities/webhook-delivery.ts';
import type { Store } from '../connectors/storage/store.ts';
import { parseStorageUrl } from '../connectors/storage/url.ts';
import {
  WebhookConfigError,
  type WebhookDeliveryConfig,
  webhookDeliveryConfigFromEnv,
} from '../connectors/webhooks/destinations.ts';
import { AddressAllowlist } from '../connectors/webhooks/safe-dispatcher.ts';
import { ConfigError } from './config.ts';

type Env = Record<string, string | undefined>;

/**
 * Reads `SIGNAL_KIT_WEBHOOK_DESTINATIONS`, `SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL` and `SIGNAL_KIT_WEBHOOK_ALLOWLIST`
 * (see connectors/webhooks/destinations.ts) and checks them before anything starts: a mistake is a `ConfigError`
 * naming the variable. No variable set means no destinations (events are acknowledged and delivered nowhere).
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

export interface WebhookWorkerDeps {
  webhooks: WebhookDeliveryConfig;
  /** The worker's (cached) store opener, shared with the other activities. */
  openStore: (url: string) => Store;
}

/** Every activity `deliverSignalEvent` and `bucketCollector` schedule; registered on the main task queue. */
export function createWebhookWorkerActivities(deps: WebhookWorkerDeps) {
  const { webhooks: config, openStore } = deps;
  return {
    ...createWebhookDeliveryActivities({ config, openStore }),
    ...createCollectorActivities({ config, openStore }),
  };
}

/** Merges activity sets, refusing two activities of the same name (one would silently replace the other). */
export function mergeActivities<T extends object[]>(...sets: T): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const set of sets) {
    for (const [name, fn] of Object.entries(set)) {
      if (name in merged) throw new Error(`two activities are named ${name}`);
      merged[name] = fn;
    }
  }
  return merged;
}
