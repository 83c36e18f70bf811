import { constants, publicEncrypt } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPE, SignalApiError } from '../connectors/errors.ts';
import type { SignalClient } from '../connectors/signal-api/client.ts';
import type { CreateWebhookParams, UpdateWebhookParams } from '../connectors/signal-api/types.ts';

/** One management call on the service's webhook subscriptions (spec 6), as `signal-kit webhooks` asks for it. */
export type WebhookSubscriptionRequest =
  | {
      action: 'subscribe';
      params: CreateWebhookParams;
      /** PEM public key (RSA) of the caller: the new subscription's secret comes back sealed to it. */
      sealSecretFor?: string;
    }
  | { action: 'list' }
  | { action: 'update'; id: string; params: UpdateWebhookParams }
  | { action: 'delete'; id: string }
  | { action: 'test'; id: string };

/** The failure type of a call the service refused; its details hold the error's fields for the CLI's message. */
export const WEBHOOK_API_ERROR = FAILURE_TYPE.webhookApi;

/**
 * Makes one subscription management call. It runs on the rate-limited API queue like every other call, so the
 * CLI's calls share the account's budget with running jobs. The signing secret of a new subscription never enters
 * history in the clear: it is sealed to the caller's public key, or dropped when none is given.
 */
export async function manageWebhookSubscription(
  client: SignalClient,
  request: WebhookSubscriptionRequest,
): Promise<Record<string, unknown>> {
  try {
    const result = await call(client, request);
    const body = { ...(result as Record<string, unknown>) };
    if (typeof body.secret === 'string') {
      const secret = body.secret;
      delete body.secret;
      if (request.action === 'subscribe' && request.sealSecretFor) {
        body.sealed_secret = publicEncrypt(
          { key: request.sealSecretFor, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
          Buffer.from(secret),
        ).toString('base64');
      }
    }
    return body;
  } catch (error) {
    if (!(error instanceof SignalApiError)) throw error;
    if (error.retryable && request.action !== 'subscribe') throw error;
    // A refused call, or a subscribe whose outcome is unknown (creating twice would make two subscriptions).
    const unknown = error.retryable ? '; the subscription may have been created: check `webhooks list`' : '';
    throw ApplicationFailure.create({
      message: `${error.message}${unknown}`,
      type: WEBHOOK_API_ERROR,
      nonRetryable: true,
      details: [{ ...error.toJSON(), message: `${error.message}${unknown}` }],
    });
  }
}

function call(client: SignalClient, request: WebhookSubscriptionRequest): Promise<unknown> {
  const once = { retry: false } as const;
  switch (request.action) {
    case 'subscribe':
      return client.createWebhook(request.params, once);
    case 'list':
      return client.listWebhooks(once);
    case 'update':
      return client.updateWebhook(request.id, request.params, once);
    case 'delete':
      return client.deleteWebhook(request.id, once);
    case 'test':
      return client.testWebhook(request.id, once);
  }
}
