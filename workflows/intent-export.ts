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
  const job: JobRef = {
    jobId: input.jobId,
    kind: 'intent-export',
    output: input.output,
    compression: input.compression ?? 'gzip',
  };
  const taskQueue = input.taskQueue ?? DEFAULT_TASK_QUEUE;
  const jobs = proxyActivities<JobActivities>(storageActivityOptions(taskQueue));
  const api = proxyActivities<ApiActivities>(apiActivityOptions(input.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE));
  const download = proxyActivities<ExportActivities>({
    ...storageActivityOptions(taskQueue),
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
  });
  const startedAt = new Date().toISOString();
  let phase: JobProgress['status'] = 'submitting';
  let lines = 0;
  let credits = 0;
  const progress = (): JobProgress => ({
    jobId: job.jobId,
    kind: job.kind,
    status: phase,
    batchesTotal: 1,
    batchesDone: phase === 'completed' ? 1 : 0,
    batchesFailed: phase === 'failed' ? 1 : 0,
    rows: lines,
    distinct: lines,
    invalid: 0,
    ok: lines,
    not_found: 0,
    error: 0,
    credits,
  });
  setHandler(progressQuery, progress);
  /** Each phase where Temporal's web UI shows the job's progress (the workflow's current details). */
  const enter = (next: JobProgress['status']) => {
    phase = next;
    setCurrentDetails(progressDetails(progress()));
  };
  enter('submitting');

  const finished = await jobs.findFinishedJob({ job, input: null, options: { ...input.request } });
  if (finished) return finished;

  let submitted: Awaited<ReturnType<ApiActivities['submitIntentExport']>>;
  try {
    submitted = await api.submitIntentExport.executeWithOptions(
      { summary: `submit the export of topics ${input.request.topic_ids.join(', ')} · job ${job.jobId}` },
      [{ job, request: input.request, ...(input.resubmit ? { resubmit: true } : {}) }],
    );
  } catch (error) {
    return fail(failureMessage(error));
  }
  credits = submitted.credits;
  enter('waiting');

  const {
    initialMs = 1000,
    factor = 1.5,
    maxMs = 30_000,
    timeoutMs = 6 * 3600_000,
    unknownStatusTimeoutMs = 10 * 60_000,
  } = input.poll ?? {};
  let delay = initialMs;
  let waited = 0;
  let waitedOnUnknown = 0;
  for (;;) {
    const state = await api.getIntentExportStatus({ job, exportId: submitted.exportId });
    const id = submitted.exportId;
    if (state.status === 'ready') break;
    if (state.status === 'failed' || state.status === 'expired') {
      return fail(
        `export ${id} ended ${state.status}: ${state.reason ?? 'no reason given'}; the service said ${state.said}`,
      );
    }
    const known = state.status !== undefined && WAITING_STATUSES.has(state.status);
    // Tolerant in: a status of another name with a download link is taken as ready.
    if (!known && state.downloadable) break;
    if (waited >= timeoutMs) {
      return fail(`export ${id} was not ready after ${timeoutMs} ms; the service said ${state.said}`);
    }
    if (!known && waitedOnUnknown >= unknownStatusTimeoutMs) {
      const status = state.status === undefined ? 'no status' : `status "${state.status}"`;
      return fail(
        `export ${id} reported ${status}, which the kit does not know, for ${unknownStatusTimeoutMs} ms; ` +
          `the service said ${state.said}`,
      );
    }
    await sleep(delay);
    waited += delay;
    waitedOnUnknown = known ? 0 : waitedOnUnknown + delay;
    delay = Math.min(maxMs, Math.ceil(delay * factor));
  }

  enter('downloading');
  let stored: { lines: number };
  for (let refreshes = 0; ; refreshes++) {
    try {
      stored = await download.downloadIntentExport.executeWithOptions(
        { summary: `download export ${submitted.exportId} into the bucket · job ${job.jobId}` },
        [{ job, exportId: submitted.exportId }],
      );
      break;
    } catch (error) {
      if (!isLinkExpired(error) || refreshes >= MAX_LINK_REFRESHES) return fail(failureMessage(error));
    }
    // The signed link expired (or was never recorded): a fresh one comes from a status call on the API queue.
    const state = await api.getIntentExportStatus({ job, exportId: submitted.exportId });
    if (state.status !== 'ready' && !state.downloadable) {
      return fail(`export ${submitted.exportId} is not ready for download; the service said ${state.said}`);
    }
  }
  lines = stored.lines;
  enter('finalizing');
  const result = await jobs.finalizeJob({
    job,
    input: null,
    status: 'completed',
    startedAt,
    details: { export_id: submitted.exportId, request: input.request, submit_credits: submitted.credits },
  });
  enter('completed');
  return result;

  async function fail(message: string): Promise<never> {
    enter('failed');
    await jobs.finalizeJob({
      job,
      input: null,
      status: 'failed',
      startedAt,
      error: message,
      details: { request: input.request },
    });
    throw ApplicationFailure.nonRetryable(`job ${job.jobId} failed: ${message}`, FAILURE_TYPE.jobFailed);
  }
}
