export type {
  JobKind,
  JobResult,
  JobStatus,
  Manifest,
  ManifestPart,
  VerificationSummary,
} from './activities/jobs/types.ts';
export { type OpenStoreOptions, openStore } from './config/storage.ts';
export { WebhookVerificationError, type WebhookVerificationReason } from './connectors/errors.ts';
export * from './connectors/signal-api/index.ts';
export type {
  ObjectInfo,
  ObjectWriter,
  Store,
  WriteOptions,
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
} from './connectors/webhooks/signature.ts';
export {
  followJob,
  type JobHandle,
  type JobProgressListener,
  type JobQueues,
  type JobStart,
  startJob,
} from './library/jobs.ts';
export type { BulkEnrichInput } from './workflows/bulk-enrich.ts';
export type { IntentExportInput } from './workflows/intent-export.ts';
export type { JobProgress } from './workflows/job-progress.ts';
export type { VerifyEmailsInput } from './workflows/verify-emails.ts';
