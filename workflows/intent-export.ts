import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { IntentExportRequest } from '../activities/jobs/intent-export.ts';
import type { JobRef } from '../activities/jobs/types.ts';
import type { ApiActivities, ExportActivities, JobActivities } from '../activities/registry.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { apiActivityOptions, storageActivityOptions } from './activity-options.ts';
import { failureMessage } from './batch-runner.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from './constants.ts';
import { jobIdProblem } from './job-id.ts';
import { type JobProgress, type JobResult, progressDetails, progressQuery } from './job-progress.ts';
import type { ApiActivityProxy, JobActivityProxy } from './run-state.ts';

/** Fresh download links fetched for one export before the job gives up. */
const MAX_LINK_REFRESHES = 3;

function isLinkExpired(error: unknown): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type === FAILURE_TYPE.downloadLinkExpired;
}

export interface IntentExportInput {
  jobId: string;
  output: string;
  request: IntentExportRequest;
  compression?: 'gzip' | 'none';
  taskQueue?: string;
  apiTaskQueue?: string;
  /**
   * Polling backoff: first delay, growth factor and ceiling (ms); `timeoutMs` bounds the wait while the export is
   * `queued`/`running`, `unknownStatusTimeoutMs` the wait on a status the kit does not know (or none).
   */
  poll?: { initialMs?: number; factor?: number; maxMs?: number; timeoutMs?: number; unknownStatusTimeoutMs?: number };
  /**
   * Submit again although an earlier submit of this job has an unknown outcome (it may have been charged): the
   * user's explicit word, never the kit's default.
   */
  resubmit?: boolean;
}

/** Statuses that mean "not ready yet, keep waiting" (the spec shows none; the sandbox uses the first two). */
const WAITING_STATUSES = new Set(['queued', 'running', 'pending', 'processing', 'in_progress', 'submitted']);

/** Submits a buyer-intent export, polls it until ready, and streams its JSONL download into the bucket. */
export async function intentExport(input: IntentExportInput): Promise<JobResult> {
  const badJobId = jobIdProblem(input.jobId);
  if (badJobId) throw ApplicationFailure.nonRetryable(badJobId, FAILURE_TYPE.input);
  const ex = openExportRun(input);
  const finished = await ex.jobs.findFinishedJob({ job: ex.job, input: null, options: { ...input.request } });
  if (finished) return finished;
  const submitted = await submitExport(ex);
  await waitUntilReady(ex, submitted.exportId);
  const stored = await downloadExport(ex, submitted.exportId);
  ex.lines = stored.lines;
  ex.enter('finalizing');
  const result = await ex.jobs.finalizeJob({
    job: ex.job,
    input: null,
    status: 'completed',
    startedAt: ex.startedAt,
    details: { export_id: submitted.exportId, request: input.request, submit_credits: submitted.credits },
  });
  ex.enter('completed');
  return result;
}

/** One export job: what its steps share. */
interface ExportRun {
  readonly input: IntentExportInput;
  readonly job: JobRef;
  readonly jobs: JobActivityProxy;
  readonly api: ApiActivityProxy;
  readonly download: ReturnType<typeof proxyActivities<ExportActivities>>;
  readonly startedAt: string;
  lines: number;
  credits: number;
  /** Enters a phase, shown where Temporal's web UI shows the job's progress (the workflow's current details). */
  enter: (phase: JobProgress['status']) => void;
}

/** The job's state, with its progress answered to the `progress` query; it enters `submitting`. */
function openExportRun(input: IntentExportInput): ExportRun {
  const taskQueue = input.taskQueue ?? DEFAULT_TASK_QUEUE;
  let phase: JobProgress['status'] = 'submitting';
  const ex: ExportRun = {
    input,
    job: { jobId: input.jobId, kind: 'intent-export', output: input.output, compression: input.compression ?? 'gzip' },
    jobs: proxyActivities<JobActivities>(storageActivityOptions(taskQueue)),
    api: proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE)),
    download: proxyActivities<ExportActivities>({
      ...storageActivityOptions(taskQueue),
      startToCloseTimeout: '2 hours',
      heartbeatTimeout: '1 minute',
    }),
    startedAt: new Date().toISOString(),
    lines: 0,
    credits: 0,
    enter: (next) => {
      phase = next;
      setCurrentDetails(progressDetails(progress()));
    },
  };
  const progress = (): JobProgress => ({
    jobId: ex.job.jobId,
    kind: ex.job.kind,
    status: phase,
    batchesTotal: 1,
    batchesDone: phase === 'completed' ? 1 : 0,
    batchesFailed: phase === 'failed' ? 1 : 0,
    rows: ex.lines,
    distinct: ex.lines,
    invalid: 0,
    ok: ex.lines,
    not_found: 0,
    error: 0,
    credits: ex.credits,
  });
  setHandler(progressQuery, progress);
  ex.enter('submitting');
  return ex;
}

/** Submits the export (its credits are counted from then on); a refused submit fails the job. */
async function submitExport(ex: ExportRun): Promise<Awaited<ReturnType<ApiActivities['submitIntentExport']>>> {
  const { input, job } = ex;
  let submitted: Awaited<ReturnType<ApiActivities['submitIntentExport']>>;
  try {
    submitted = await ex.api.submitIntentExport.executeWithOptions(
      { summary: `submit the export of topics ${input.request.topic_ids.join(', ')} · job ${job.jobId}` },
      [{ job, request: input.request, ...(input.resubmit ? { resubmit: true } : {}) }],
    );
  } catch (error) {
    return failExport(ex, failureMessage(error));
  }
  ex.credits = submitted.credits;
  ex.enter('waiting');
  return submitted;
}

/**
 * Polls the export's status, backing off, until it is ready (or has a download link under a status of another name);
 * it fails the job when the export failed or expired, is not ready in time, or keeps a status the kit does not know.
 */
async function waitUntilReady(ex: ExportRun, id: string): Promise<void> {
  const {
    initialMs = 1000,
    factor = 1.5,
    maxMs = 30_000,
    timeoutMs = 6 * 3600_000,
    unknownStatusTimeoutMs = 10 * 60_000,
  } = ex.input.poll ?? {};
  let delay = initialMs;
  let waited = 0;
  let waitedOnUnknown = 0;
  for (;;) {
    const state = await ex.api.getIntentExportStatus({ job: ex.job, exportId: id });
    if (state.status === 'ready') return;
    if (state.status === 'failed' || state.status === 'expired') {
      return failExport(
        ex,
        `export ${id} ended ${state.status}: ${state.reason ?? 'no reason given'}; the service said ${state.said}`,
      );
    }
    const known = state.status !== undefined && WAITING_STATUSES.has(state.status);
    // Tolerant in: a status of another name with a download link is taken as ready.
    if (!known && state.downloadable) return;
    if (waited >= timeoutMs) {
      return failExport(ex, `export ${id} was not ready after ${timeoutMs} ms; the service said ${state.said}`);
    }
    if (!known && waitedOnUnknown >= unknownStatusTimeoutMs) {
      const status = state.status === undefined ? 'no status' : `status "${state.status}"`;
      return failExport(
        ex,
        `export ${id} reported ${status}, which the kit does not know, for ${unknownStatusTimeoutMs} ms; ` +
          `the service said ${state.said}`,
      );
    }
    await sleep(delay);
    waited += delay;
    waitedOnUnknown = known ? 0 : waitedOnUnknown + delay;
    delay = Math.min(maxMs, Math.ceil(delay * factor));
  }
}

/** Streams the export's download into the bucket; an expired signed link is refreshed by a status call. */
async function downloadExport(ex: ExportRun, id: string): Promise<{ lines: number }> {
  const { job } = ex;
  ex.enter('downloading');
  for (let refreshes = 0; ; refreshes++) {
    try {
      return await ex.download.downloadIntentExport.executeWithOptions(
        { summary: `download export ${id} into the bucket · job ${job.jobId}` },
        [{ job, exportId: id }],
      );
    } catch (error) {
      if (!isLinkExpired(error) || refreshes >= MAX_LINK_REFRESHES) return failExport(ex, failureMessage(error));
    }
    // The signed link expired (or was never recorded): a fresh one comes from a status call on the API queue.
    const state = await ex.api.getIntentExportStatus({ job, exportId: id });
    if (state.status !== 'ready' && !state.downloadable) {
      return failExport(ex, `export ${id} is not ready for download; the service said ${state.said}`);
    }
  }
}

/** Finalizes the job as failed with its reason, then fails the workflow. */
async function failExport(ex: ExportRun, message: string): Promise<never> {
  ex.enter('failed');
  await ex.jobs.finalizeJob({
    job: ex.job,
    input: null,
    status: 'failed',
    startedAt: ex.startedAt,
    error: message,
    details: { request: ex.input.request },
  });
  throw ApplicationFailure.nonRetryable(`job ${ex.job.jobId} failed: ${message}`, FAILURE_TYPE.jobFailed);
}
