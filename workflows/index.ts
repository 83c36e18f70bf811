// Every workflow the worker registers. Workflow code is deterministic: no I/O, only @temporalio/workflow.

export { bucketCollector } from './bucket-collector.ts';
export { bulkEnrich } from './bulk-enrich.ts';
export { lookupCatalog } from './catalog-lookup.ts';
export { crmSync } from './crm-sync.ts';
export { enrichContacts } from './enrich-contacts.ts';
export { intentExport } from './intent-export.ts';
export { apiRateLimiter } from './rate-limiter.ts';
export { scheduledFeed } from './scheduled-feed.ts';
export { scheduledPush } from './scheduled-push.ts';
export { verifyEmails } from './verify-emails.ts';
export { deliverSignalEvent } from './webhook-delivery.ts';
export { manageWebhooks } from './webhook-subscriptions.ts';
