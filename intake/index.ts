export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_JSON_DEPTH,
  type Enqueue,
  type EnqueueContext,
  type EnqueueResult,
  RECEIVER_TIMEOUTS,
  type ReceiverAuth,
  type ReceiverLogEntry,
  type ReceiverTimeouts,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './options.ts';
export { startWebhookReceiver } from './server.ts';
export { type TemporalEnqueueOptions, temporalEnqueue } from './temporal-enqueue.ts';
