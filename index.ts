export * from './connectors/signal-api/index.ts';
export {
  type ObjectInfo,
  type ObjectWriter,
  type OpenStoreOptions,
  openStore,
  type Store,
  type WriteOptions,
} from './connectors/storage/index.ts';
export {
  DEFAULT_TOLERANCE_SECONDS,
  generateWebhookSecret,
  type HeaderSource,
  type SignWebhookInput,
  signWebhook,
  type VerifiedWebhook,
  type VerifyWebhookInput,
  verifyWebhook,
  type WebhookBody,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './connectors/webhooks/signature.ts';
