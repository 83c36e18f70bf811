import { defineQuery, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { JobActivities } from '../activities/registry.ts';
import type { JobStatus } from '../activities/run/types.ts';
import type {
  SyncFilters,
  SyncInputOptions,
  SyncKind,
  SyncPlan,
  SyncResult,
  SyncRunRef,
} from '../activities/sync/types.ts';
import type { OutputFormat } from '../activities/tables/formats.ts';
import type { WriteBackOptions } from '../activities/writeback/types.ts';
import { CONTACT_BATCH, CREDITS, MAX_BULK_ENRICH_DOMAINS } from '../connectors/signal-api/limits.ts';
import { crmActivityOptions, isFatalFailure } from './activity-options.ts';
import { type BatchTotals, failureMessage, type RunEnding, type WindowOutcome } from './batch-runner.ts';
import { DEFAULT_TASK_QUEUE } from './constants.ts';
import { runIdOf } from './push-ids.ts';
import { type AlertFacts, withRunAlert } from './run-alert.ts';
import type { ScheduledRunState } from './run-state.ts';
import {
  type BatchedRun,
  callWindow,
  carryOnFrom,
  finishBatchedRun,
  openBatchedRun,
  runScheduled,
  type ScheduledRunSteps,
  signalFilters,
  windowOrCarryOn,
} from './scheduled-run.ts';
import { scheduledTime } from './scheduled-time.ts';

/** The target of a nightly CRM sync schedule (`schedule create --kind enrich`): one run over the night's export. */
export interface CrmSyncInput {
  /** The schedule's name: `<output>/<name>/` holds its state, runs and work. */
  name: string;
  /** `enrich`: an accounts export (bulk calls by domain); `enrich-contacts`: a contacts export (a call per contact). */
  kind: SyncKind;
  /** The CRM export (file://, s3://, gs:// or a path; CSV, TSV/TXT, XLSX or JSONL), read afresh each run. */
  input: string;
  /** The export's text encoding (`--encoding`); found from the file when absent. */
  encoding?: SyncInputOptions['encoding'];
  /** An .xlsx export's sheet (`--sheet`); the first when absent. */
  sheet?: string;
  /** Base output URL. */
  output: string;
  column?: string;
  idColumn?: string;
  keepColumns?: string[];
  signalTypes?: string[];
  /** Signals per company and call (default and at most 500). */
  limit?: number;
  /** No bulk call is started that could take this run's credits over this; the rest waits for the next run. */
  maxCredits?: number;
  /** Bulk calls in flight at once (default 4). */
  concurrency?: number;
  /** Tables written besides `rows.csv`. */
  formats?: OutputFormat[];
  taskQueue?: string;
  apiTaskQueue?: string;
  batchesPerRun?: number;
  /** The run's time when it is not started by a schedule (default: when the workflow chain started). */
  runAt?: string;
  /** Where an alert goes when the night fails, stops on its budget or ends with failed batches (`--notify`). */
  notify?: string;
  /** Write the night's changes back to the CRM (`--write-back`): the CRM, the fields, their policies. No secret. */
  writeBack?: WriteBackOptions;
  /** The write-back's heartbeat timeout: how soon another worker takes over a killed one's (default 5 minutes; drills). */
  writeBackHeartbeatMs?: number;
  /** Carried across continue-as-new; not for callers. */
  carried?: { scheduledAt: string; startedAt: string; plan: SyncPlan; next: number; totals: BatchTotals };
}

/** What `--wait` and the web UI show of a night while it runs. */
export interface CrmSyncProgress {
  status: JobStatus | 'planning' | 'finalizing';
  /** Distinct companies of the night's export. */
  companies: number;
  credits: number;
  batchesTotal: number;
  batchesDone: number;
  batchesFailed: number;
  name: string;
  runId: string;
}

/** Nights started before a night published the answers an earlier night's output refused replay without that step. */
export const PUBLISH_KEPT_PATCH = 'crm-sync-publish-kept-answers';

/** Nights of schedules with `--write-back`: the CRM's pre-flight before the paid calls, the write-back after the files. */
export const WRITE_BACK_PATCH = 'crm-sync-write-back';

export const crmSyncProgressQuery = defineQuery<CrmSyncProgress>('progress');

/**
 * One night of a CRM sync. Plans the run (the export read afresh and matched as `enrich` matches it; its companies
 * packed into bulk calls by where each is complete through), asks each call through the sliding window, then
 * writes the night's `rows.csv`, `changes.csv` and manifest and commits the state.
 *
 * The run id comes from the schedule's nominal time, so a retried run writes the same keys and its saved answers
 * are not asked (or paid for) again. Two runs of one schedule never run at once: the schedule skips a run while one
 * is running, and its runs share the schedule's workflow id prefix.
 */
export async function crmSync(input: CrmSyncInput): Promise<SyncResult> {
  if (!input.notify) return runScheduled(input, nightSteps);
  const runId = runIdOf(input.carried?.scheduledAt ?? scheduledTime(input.runAt));
  const taskQueue = input.taskQueue ?? DEFAULT_TASK_QUEUE;
  const target = { url: input.notify, schedule: input.name, kind: input.kind, taskQueue };
  return withRunAlert(target, runId, () => runScheduled(input, nightSteps), syncAlertFacts);
}

/**
 * What a night's alert says of it: its counts, credits and files; a night that completed but whose write-back the CRM
 * rejected records of (or that could not write back) alerts as `rejected_records`.
 */
function syncAlertFacts(result: SyncResult): AlertFacts {
  const files = { manifest: result.manifestUrl, rows: result.rowsUrl, changes: result.changesUrl };
  const facts = { status: result.status, runId: result.runId, counts: result.records, credits: result.credits, files };
  const written = result.writeBack;
  if (!written || result.status !== 'completed') return facts;
  if ('error' in written)
    return { ...facts, status: 'rejected_records', reason: `write-back failed: ${written.error}` };
  if (written.rejected === 0) return facts;
  return {
    ...facts,
    status: 'rejected_records',
    counts: { ...result.records, writeBack: written },
    files: { ...files, writeBackReport: written.reportUrl },
  };
}

/** One night, up to its continue-as-new: what its steps share. */
interface Night extends BatchedRun<CrmSyncInput, SyncRunRef, SyncPlan> {
  readonly filters: SyncFilters;
}

/** A night's own steps in the scheduled run's skeleton (workflows/scheduled-run.ts). */
const nightSteps: ScheduledRunSteps<CrmSyncInput, SyncRunRef, Night, SyncPlan, SyncResult> = {
  scheduledAt: (input) => scheduledTime(input.runAt),
  ref: runOf,
  open: openNight,
  plan: planNight,
  work: nightCalls,
  finish: finalizeNight,
};

/** The night's state, carried over or fresh, with its progress answered to the `progress` query. */
function openNight(state: ScheduledRunState<CrmSyncInput, SyncRunRef>): Night {
  const { input, run } = state;
  const night: Night = { ...openBatchedRun(state), filters: signalFilters(input) };
  const { totals } = night;
  setHandler(crmSyncProgressQuery, () => ({
    status: night.phase,
    companies: night.plan?.companies ?? 0,
    credits: totals.credits,
    batchesTotal: night.plan?.batches ?? 0,
    batchesDone: totals.batchesDone,
    batchesFailed: totals.batchesFailed,
    name: run.name,
    runId: run.runId,
  }));
  return night;
}

/**
 * The night's plan (the chain's first run): the CRM's write-back checked, an earlier night's kept answers published,
 * the export read and matched, records named only by a LinkedIn URL or a name resolved, the companies packed.
 */
async function planNight(night: Night): Promise<SyncPlan> {
  const { input, run, api, jobs } = night;
  if (night.plan) return night.plan;
  if (input.writeBack && patched(WRITE_BACK_PATCH)) {
    // Before any paid call: a CRM that would refuse the write-back (a field, a scope) stops the night here.
    const { crm, fields } = input.writeBack;
    await crmStep(input).preflightWriteBack({ crm, kind: input.kind, ...(fields ? { fields } : {}) });
  }
  if (patched(PUBLISH_KEPT_PATCH)) {
    // Before the plan: answers of an earlier night that its output refused and this worker kept are published, so
    // the night that carries it on takes them in instead of paying for them again.
    await api.publishKeptSyncAnswers({ run });
  }
  let plan = await jobs.prepareSyncRun({
    run,
    ...(input.kind === 'enrich-contacts' ? { kind: input.kind } : {}),
    input: input.input,
    ...(input.column ? { column: input.column } : {}),
    ...(input.idColumn ? { idColumn: input.idColumn } : {}),
    ...(input.keepColumns?.length ? { keepColumns: input.keepColumns } : {}),
    ...(input.encoding ? { encoding: input.encoding } : {}),
    ...(input.sheet !== undefined ? { sheet: input.sheet } : {}),
  });
  if (!plan.packed) {
    // Records named only by a LinkedIn URL or a name: their companies first (free calls), then the run's calls.
    const resolving = plan.resolveBatches;
    const concurrency = Math.max(1, input.concurrency ?? 4);
    for (let first = 0; first < resolving; first += concurrency) {
      const indexes = Array.from({ length: Math.min(concurrency, resolving - first) }, (_, i) => first + i);
      await Promise.all(indexes.map((index) => api.resolveSyncCompanies({ run, index })));
    }
    plan = await jobs.packSyncRun({ run });
  }
  night.plan = plan;
  return plan;
}

/** The night's calls through the sliding window; a long export continues as new between windows. */
function nightCalls(night: Night, planned: SyncPlan) {
  const { input, run, api, filters } = night;
  night.phase = 'running';
  const contacts = input.kind === 'enrich-contacts';
  const window = callWindow(night, {
    from: input.carried?.next ?? 0,
    total: planned.batches,
    // The most one call can cost: its companies × limit × 2 credits.
    worstCaseCredits: () =>
      Math.min(contacts ? CONTACT_BATCH : MAX_BULK_ENRICH_DOMAINS, planned.companies) *
      filters.limit *
      CREDITS.perEnrichedSignal,
    run: async (index: number) => {
      try {
        const summary = `sync ${run.name} batch ${index + 1} of ${planned.batches} · run ${run.runId}`;
        const fetch = contacts ? api.fetchSyncContacts : api.fetchSyncBatch;
        return await fetch.executeWithOptions({ summary }, [{ run, index, filters }]);
      } catch (error) {
        if (isFatalFailure(error)) throw error;
        // Retries are spent: its companies keep what they hold, and the next run asks them again.
        return {
          index,
          reused: false,
          failed: true,
          counts: { lines: 0, ok: 0, not_found: 0, error: 0, invalid: 0, credits: 0 },
        };
      }
    },
  });
  return windowOrCarryOn(window, (next) => carryOnFrom(night, planned, next, {}));
}

/** Writes the night's files, manifest and state (finalizeSyncRun). */
async function finalizeNight(night: Night, outcome: WindowOutcome | undefined): Promise<SyncResult> {
  const { input, run, jobs, filters, startedAt, scheduledAt } = night;
  const details = { filters, max_credits: input.maxCredits ?? null, workflow_id: workflowInfo().workflowId };
  const keep = input.keepColumns?.length ? { keepColumns: input.keepColumns } : {};
  const batches = night.plan?.batches ?? 0;
  const finalize = (ending: RunEnding) =>
    jobs.finalizeSyncRun({
      ...{ run, input: input.input, kind: input.kind, startedAt, scheduledAt, batches },
      ...keep,
      ...ending,
      details,
    });
  const label = `sync ${run.name} run ${run.runId}`;
  const result = await finishBatchedRun(night, outcome!, label, finalize);
  if (input.writeBack && patched(WRITE_BACK_PATCH)) result.writeBack = await writeBack(input, run);
  return result;
}

const crmStep = (input: CrmSyncInput) =>
  proxyActivities<JobActivities>(crmActivityOptions(input.taskQueue ?? DEFAULT_TASK_QUEUE, input.writeBackHeartbeatMs));

/** Nights whose write-back was refused for good (an expired token, a worker without the CRM's settings) failed whole. */
export const WRITE_BACK_REFUSED_PATCH = 'crm-sync-write-back-refused-pending';

/**
 * The night's files are written: its changes go to the CRM. A write-back that fails after its retries, or is refused
 * for good (a HubSpot token expired since the pre-flight: nothing can refresh it), leaves its changes pending in the
 * ledger (the next night writes them first); the night itself stands, and says why.
 */
async function writeBack(input: CrmSyncInput, run: SyncRunRef): Promise<SyncResult['writeBack']> {
  try {
    return await crmStep(input).writeBackNight({ run, kind: input.kind, ...(input.writeBack as WriteBackOptions) });
  } catch (error) {
    if (isFatalFailure(error) && !patched(WRITE_BACK_REFUSED_PATCH)) throw error;
    return { error: failureMessage(error) };
  }
}

/** The run's references: its keys follow from the schedule's name and the night's scheduled time. */
function runOf(input: CrmSyncInput, scheduledAt: string): SyncRunRef {
  const formats = input.formats?.length ? { formats: input.formats } : {};
  return {
    name: input.name,
    output: input.output,
    runId: runIdOf(scheduledAt),
    date: scheduledAt.slice(0, 10),
    at: scheduledAt,
    ...formats,
  };
}
