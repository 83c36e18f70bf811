/**
 * The webhook pieces are reachable where users and the worker look for them: the package root exports the signing
 * functions and the store opener, the worker's workflows entry registers the webhook workflows, and the worker's
 * webhook activities are built from checked configuration.
 */
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createWebhookActivities, mergeActivities } from '../../../activities/registry.ts';
import { parseWebhookDeliveryConfig } from '../../../config/webhooks.ts';
import { ConfigError } from '../../../config/worker.ts';
import * as root from '../../../index.ts';
import * as workflows from '../../../workflows/index.ts';

describe('package root', () => {
  it('exports the Standard Webhooks functions, their error and the store opener', () => {
    const secret = root.generateWebhookSecret();
    const body = JSON.stringify({ event: 'signal.created' });
    const headers = root.signWebhook({ id: 'msg_1', timestamp: new Date(), body, secret });
    expect(root.verifyWebhook({ headers, body, secrets: [secret] })).toBeTruthy();
    let caught: unknown;
    try {
      root.verifyWebhook({ headers, body: `${body} `, secrets: [secret] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(root.WebhookVerificationError);
    expect((caught as InstanceType<typeof root.WebhookVerificationError>).reason).toBe('no_matching_signature');
    const store: root.Store = root.openStore(pathToFileURL(process.cwd()).href);
    return expect(store.exists('package.json')).resolves.toBe(true);
  });
});

describe('worker wiring', () => {
  it('registers every workflow the kit starts by name (the names are strings, not checked by the compiler)', () => {
    expect(Object.keys(workflows).sort()).toEqual([
      'apiRateLimiter',
      'bucketCollector',
      'bulkEnrich',
      'crmSync',
      'deliverSignalEvent',
      'enrichContacts',
      'intentExport',
      'lookupCatalog',
      'manageWebhooks',
      'scheduledFeed',
      'scheduledPush',
      'verifyEmails',
    ]);
  });

  it("builds every activity the webhook workflows and a schedule's alert schedule", () => {
    const activities = createWebhookActivities({
      webhooks: parseWebhookDeliveryConfig({}),
      openStore: root.openStore,
    });
    // Exactly the activities the webhook workflows and `--notify` schedule by name: none missing, none left over.
    expect(Object.keys(activities).sort()).toEqual(
      [
        'listWebhookDestinations',
        'deliverToEndpoint',
        'writeDeadLetter',
        'getDestinationState',
        'enableDestination',
        'forwardToCollector',
        'writeCollectorPart',
        'notifyRunOutcome',
      ].sort(),
    );
  });

  it('refuses two activities of the same name', () => {
    expect(mergeActivities({ a: () => 1 }, { b: () => 2 })).toHaveProperty('b');
    expect(() => mergeActivities({ a: () => 1 }, { a: () => 2 })).toThrow(/named a/);
  });

  it('reads the destinations from the environment, naming the variable of a mistake', () => {
    const secret = root.generateWebhookSecret();
    const ok = parseWebhookDeliveryConfig({
      SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([
        { id: 'crm', kind: 'http', url: 'https://crm.example/hook', secret },
        { id: 'lake', kind: 'bucket', url: 's3://lake-bucket/signals' },
      ]),
      SIGNAL_KIT_WEBHOOK_ALLOWLIST: '127.0.0.1/32',
    });
    expect(ok.destinations.map((d) => d.id)).toEqual(['crm', 'lake']);
    expect(ok.allowlist).toEqual(['127.0.0.1/32']);

    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ SIGNAL_KIT_WEBHOOK_DESTINATIONS: '[' }, /SIGNAL_KIT_WEBHOOK_DESTINATIONS/],
      [
        { SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([{ id: 'x', kind: 'http', url: 'ftp://a', secret }]) },
        /SIGNAL_KIT_WEBHOOK_DESTINATIONS.*url/,
      ],
      [
        { SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([{ id: 'x', kind: 'bucket', url: 'ftp://bucket' }]) },
        /SIGNAL_KIT_WEBHOOK_DESTINATIONS 0\.url/,
      ],
      [{ SIGNAL_KIT_WEBHOOK_ALLOWLIST: '127.0.0.1/40' }, /SIGNAL_KIT_WEBHOOK_ALLOWLIST/],
      [{ SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL: 'ftp://nope' }, /SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL/],
    ];
    for (const [env, message] of cases) {
      expect(() => parseWebhookDeliveryConfig(env)).toThrow(ConfigError);
      expect(() => parseWebhookDeliveryConfig(env)).toThrow(message);
    }
  });
});
