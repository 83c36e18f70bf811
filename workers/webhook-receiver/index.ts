export {
  DEFAULT_MAX_BODY_BYTES,
  type Enqueue,
  type EnqueueContext,
  type EnqueueResult,
  type ReceiverAuth,
  type ReceiverLogEntry,
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './server.ts';
export { type TemporalEnqueueOptions, temporalEnqueue } from './temporal-enqueue.ts';
