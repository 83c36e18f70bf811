import { Context } from '@temporalio/activity';
/**
 * The activity registry: every activity the worker registers, by task queue. The main queue holds storage work,
 * export downloads and webhook delivery; the API queue holds every call to the Signal API (rate limited).
 */
import type { CrmName, CrmWriter } from '../connectors/crm/writer.ts';
import { ConfigError } from '../connectors/errors.ts';
import type { SignalClient } from '../connectors/signal-api/client.ts';
import type { Store } from '../connectors/storage/store.ts';
import type { WebhookDeliveryConfig } from '../connectors/webhooks/destinations.ts';
import { type CatalogRequest, lookupCatalog } from './catalog.ts';
import { createCollectorActivities } from './collector.ts';
import { fetchFeedPage, fetchFeedSearch } from './feeds/fetch.ts';
import { finalizeFeedRun } from './feeds/finalize.ts';
import { prepareFeedRun, stoppedFeedRun } from './feeds/plan.ts';
import { answerDuplicates } from './jobs/duplicates.ts';
import { enrichBatch } from './jobs/enrich.ts';
import { enrichContactsBatch } from './jobs/enrich-contacts.ts';
import { enrichSingleBatch } from './jobs/enrich-single.ts';
import { finalizeJob, findFinishedJob, recordFailedBatch } from './jobs/finalize.ts';
import { foldResolved } from './jobs/fold.ts';
import { downloadIntentExport, getIntentExportStatus, submitIntentExport } from './jobs/intent-export.ts';
import { prepareInput, prepareInputStart } from './jobs/prepare.ts';
import { verifyBatch } from './jobs/verify.ts';
import { currentAttempt } from './paid/paid-call.ts';
import type { PartSpool } from './paid/spool.ts';
import { fetchPushBatch, recordFailedPushBatch } from './push/fetch.ts';
import { finalizePushRun } from './push/finalize.ts';
import { preparePushCatchUp, preparePushRun } from './push/plan.ts';
import { type RecoverKeptRequest, recoverKeptAnswers } from './push/recover.ts';
import { notifyRunOutcome, type RunAlert } from './run-alert.ts';
import { fetchSyncBatch, publishKeptSyncAnswers } from './sync/fetch.ts';
import { fetchSyncContacts } from './sync/fetch-contacts.ts';
import { finalizeSyncRun } from './sync/finalize.ts';
import { packSyncRun, prepareSyncRun } from './sync/plan.ts';
import { resolveSyncCompanies } from './sync/resolve.ts';
import { createWebhookDeliveryActivities, deliveryContext } from './webhook-delivery.ts';
import { manageWebhookSubscription, type WebhookSubscriptionRequest } from './webhook-subscriptions.ts';
import { preflightWriteBack } from './writeback/preflight.ts';
import { writeBackNight } from './writeback/write-back.ts';

/** What activities need from the worker; injected so that tests can swap any of it. */
export interface ActivityDeps {
  /** The API client, built from worker configuration (the API key never travels through workflows). */
  client: SignalClient;
  /** Opens the store for a base URL (file://, s3://, gs://). */
  openStore: (url: string) => Store;
  /** The worker's local spool for paid answers the output refused (SIGNAL_KIT_SPOOL_DIR). */
  spool?: PartSpool;
  /** The CRM writers, built from the worker's CRM settings (tokens never travel through workflows). */
  crmWriter?: (crm: CrmName) => CrmWriter;
}

/** Activities that only touch storage; they run on the main task queue. */
export function createJobActivities(deps: ActivityDeps) {
  const { openStore } = deps;
  return {
    prepareInput: (request: Parameters<typeof prepareInput>[1]) => prepareInput(openStore, request),
    prepareInputStart: (request: Parameters<typeof prepareInputStart>[1]) => prepareInputStart(openStore, request),
    findFinishedJob: (request: Parameters<typeof findFinishedJob>[1]) =>
      findFinishedJob(openStore(request.job.output), request),
    recordFailedBatch: (request: Parameters<typeof recordFailedBatch>[1]) =>
      recordFailedBatch(openStore(request.job.output), request),
    finalizeJob: (request: Parameters<typeof finalizeJob>[1]) => finalizeJob(openStore(request.job.output), request),
    foldResolved: (request: Parameters<typeof foldResolved>[1]) => foldResolved(openStore(request.job.output), request),
    answerDuplicates: (request: Parameters<typeof answerDuplicates>[1]) =>
      answerDuplicates(openStore(request.job.output), request),
    preparePushRun: (request: Parameters<typeof preparePushRun>[1]) => preparePushRun(openStore, request),
    preparePushCatchUp: (request: Parameters<typeof preparePushCatchUp>[1]) =>
      preparePushCatchUp(openStore(request.run.output), request),
    recordFailedPushBatch: (request: Parameters<typeof recordFailedPushBatch>[1]) =>
      recordFailedPushBatch(openStore(request.run.output), request),
    finalizePushRun: (request: Parameters<typeof finalizePushRun>[1]) =>
      finalizePushRun(openStore(request.run.output), request),
    prepareFeedRun: (request: Parameters<typeof prepareFeedRun>[1]) =>
      prepareFeedRun(openStore(request.run.output), request),
    finalizeFeedRun: (request: Parameters<typeof finalizeFeedRun>[1]) =>
      finalizeFeedRun(openStore(request.run.output), request),
    stoppedFeedRun: (request: Parameters<typeof stoppedFeedRun>[1]) =>
      stoppedFeedRun(openStore(request.output), request),
    prepareSyncRun: (request: Parameters<typeof prepareSyncRun>[1]) => prepareSyncRun(openStore, request),
    packSyncRun: (request: Parameters<typeof packSyncRun>[1]) => packSyncRun(openStore(request.run.output), request),
    finalizeSyncRun: (request: Parameters<typeof finalizeSyncRun>[1]) =>
      finalizeSyncRun(openStore(request.run.output), request),
    preflightWriteBack: (request: Parameters<typeof preflightWriteBack>[1]) =>
      preflightWriteBack(crmWriterOf(deps, request.crm), request),
    writeBackNight: (request: Parameters<typeof writeBackNight>[1]) =>
      writeBackNight(
        { store: openStore(request.run.output), writer: crmWriterOf(deps, request.crm), progress: writeBackProgress },
        request,
      ),
  };
}

/** A write-back's progress and every pause the CRM imposed: in its heartbeat and in the worker's log (a slow night says why). */
function writeBackProgress(note: string): void {
  const context = Context.current();
  context.heartbeat(note);
  context.log.info(`write-back: ${note}`);
}

function crmWriterOf(deps: ActivityDeps, crm: CrmName): CrmWriter {
  if (!deps.crmWriter) throw new ConfigError(`this worker has no ${crm} settings: see docs/crm-write-back.md`);
  return deps.crmWriter(crm);
}

/** Activities that call the Signal API; they run on the rate-limited API task queue. */
export function createApiActivities(deps: ActivityDeps) {
  const { client, spool, openStore } = deps;
  const attempt = () => ({ ...currentAttempt(), requestTimeoutMs: client.timeoutMs, ...(spool ? { spool } : {}) });
  return {
    enrichBatch: (request: Parameters<typeof enrichBatch>[2]) =>
      enrichBatch(client, openStore(request.job.output), request, attempt()),
    enrichSingleBatch: (request: Parameters<typeof enrichSingleBatch>[2]) =>
      enrichSingleBatch(client, openStore(request.job.output), request, attempt()),
    enrichContactsBatch: (request: Parameters<typeof enrichContactsBatch>[2]) =>
      enrichContactsBatch(client, openStore(request.job.output), request, attempt()),
    verifyBatch: (request: Parameters<typeof verifyBatch>[2]) =>
      verifyBatch(client, openStore(request.job.output), request, attempt()),
    submitIntentExport: (request: Parameters<typeof submitIntentExport>[2]) =>
      submitIntentExport(client, openStore(request.job.output), request),
    getIntentExportStatus: (request: Parameters<typeof getIntentExportStatus>[2]) =>
      getIntentExportStatus(client, request.job ? openStore(request.job.output) : undefined, request),
    manageWebhookSubscription: (request: WebhookSubscriptionRequest) => manageWebhookSubscription(client, request),
    lookupCatalog: (request: CatalogRequest) => lookupCatalog(client, request),
    fetchPushBatch: (request: Parameters<typeof fetchPushBatch>[2]) =>
      fetchPushBatch(client, openStore(request.run.output), request, attempt()),
    // On the API queue: the worker whose fetch kept a refused answer in its spool is one that serves it.
    recoverKeptPushAnswers: (request: RecoverKeptRequest) =>
      recoverKeptAnswers(openStore(request.run.output), request, spool),
    resolveSyncCompanies: (request: Parameters<typeof resolveSyncCompanies>[2]) =>
      resolveSyncCompanies(client, openStore(request.run.output), request),
    publishKeptSyncAnswers: (request: Parameters<typeof publishKeptSyncAnswers>[1]) =>
      publishKeptSyncAnswers(openStore(request.run.output), request, attempt()),
    fetchSyncContacts: (request: Parameters<typeof fetchSyncContacts>[2]) =>
      fetchSyncContacts(client, openStore(request.run.output), request, attempt()),
    fetchSyncBatch: (request: Parameters<typeof fetchSyncBatch>[2]) =>
      fetchSyncBatch(client, openStore(request.run.output), request, attempt()),
    fetchFeedSearch: (request: Parameters<typeof fetchFeedSearch>[2]) =>
      fetchFeedSearch(client, openStore(request.run.output), request, attempt()),
    fetchFeedPage: (request: Parameters<typeof fetchFeedPage>[2]) =>
      fetchFeedPage(client, openStore(request.run.output), request, attempt()),
  };
}

/**
 * Long-running downloads; on the main queue. A download reads a signed link, not the API (it is not rate limited);
 * the status call that yields the link runs on the API queue.
 */
export function createExportActivities(deps: ActivityDeps) {
  const { client, openStore } = deps;
  return {
    downloadIntentExport: (request: Parameters<typeof downloadIntentExport>[2]) =>
      downloadIntentExport(client, openStore(request.job.output), request),
  };
}

/**
 * Every activity `deliverSignalEvent` and `bucketCollector` schedule, and a schedule's alert (`notifyRunOutcome`),
 * built from the worker's webhook configuration (config/webhooks.ts): the destinations and secrets stay in the worker.
 */
export function createWebhookActivities(deps: Pick<ActivityDeps, 'openStore'> & { webhooks: WebhookDeliveryConfig }) {
  const { webhooks: config, openStore } = deps;
  const alerts = deliveryContext({ config, openStore });
  return {
    ...createWebhookDeliveryActivities({ config, openStore }),
    ...createCollectorActivities({ config, openStore }),
    notifyRunOutcome: (alert: RunAlert) => notifyRunOutcome(alerts, alert),
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;

/** Everything registered on the main task queue. */
export function createMainQueueActivities(deps: ActivityDeps & { webhooks: WebhookDeliveryConfig }) {
  return mergeActivities(createJobActivities(deps), createExportActivities(deps), createWebhookActivities(deps));
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

export type JobActivities = ReturnType<typeof createJobActivities>;
export type ApiActivities = ReturnType<typeof createApiActivities>;
export type ExportActivities = ReturnType<typeof createExportActivities>;
export type { PushBatchRecord, PushManifest, PushPlan, PushResult, PushRunRef } from './push/types.ts';
