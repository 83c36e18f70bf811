import { setTimeout as delay } from 'node:timers/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { JobResult } from '../activities/jobs/types.ts';
import { type BulkEnrichInput, bulkEnrich } from '../workflows/bulk-enrich.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from '../workflows/constants.ts';
import { type EnrichContactsInput, enrichContacts } from '../workflows/enrich-contacts.ts';
import { type IntentExportInput, intentExport } from '../workflows/intent-export.ts';
import { type JobProgress, progressQuery } from '../workflows/job-progress.ts';
import { type VerifyEmailsInput, verifyEmails } from '../workflows/verify-emails.ts';
import { jobLabels } from './job-labels.ts';
import { printOutageNotice, resultThroughOutage } from './temporal-outage.ts';

export type JobStart =
  | { workflow: 'bulkEnrich'; input: BulkEnrichInput }
  | { workflow: 'enrichContacts'; input: EnrichContactsInput }
  | { workflow: 'verifyEmails'; input: VerifyEmailsInput }
  | { workflow: 'intentExport'; input: IntentExportInput };

/** Each job's workflow function: jobs are started by reference, so a renamed workflow is a type error here. */
const JOB_WORKFLOWS = { bulkEnrich, enrichContacts, verifyEmails, intentExport } as const;
type JobWorkflows = typeof JOB_WORKFLOWS;

/** A started job: a Temporal workflow handle typed by the job's workflow (its `result()` is a `JobResult`). */
export type JobHandle<W extends JobStart['workflow'] = JobStart['workflow']> = WorkflowHandle<JobWorkflows[W]>;

/** The task queues a job runs on: the worker's main queue and its rate-limited API queue (the kit's defaults). */
export interface JobQueues {
  taskQueue?: string;
  apiTaskQueue?: string;
}

/** An activity of a running job that Temporal keeps retrying: why it is not progressing. */
export interface JobRetrying {
  activity: string;
  attempt: number;
  error: string;
}

/** Receives a running job's progress about once a second (`ProgressReporter` renders it for a terminal). */
export interface JobProgressListener {
  update(progress: JobProgress): void;
  /** Each new reason a step of the job is being retried (the rate limiter unreachable, a storage outage...). */
  retrying?(note: JobRetrying): void;
  /** Temporal stopped answering: the follower retries (once per outage; see `TEMPORAL_OUTAGE_LIMIT_MS`). */
  unreachable?(message: string): void;
  finish?(): void;
}

/**
 * Starts the job's workflow (the job id is the workflow id; a job already running is joined, not started twice)
 * and returns its handle.
 */
export async function startJob<J extends JobStart>(
  client: Client,
  queues: JobQueues,
  job: J,
): Promise<JobHandle<J['workflow']>> {
  const taskQueue = queues.taskQueue ?? DEFAULT_TASK_QUEUE;
  const input = { ...job.input, taskQueue, apiTaskQueue: queues.apiTaskQueue ?? DEFAULT_API_TASK_QUEUE };
  // TypeScript cannot correlate `job.workflow` with `job.input` across the union; the JobStart type pairs them.
  const workflow = JOB_WORKFLOWS[job.workflow] as JobWorkflows[J['workflow']];
  return client.workflow.start(workflow, {
    workflowId: job.input.jobId,
    taskQueue,
    args: [input] as Parameters<JobWorkflows[J['workflow']]>,
    workflowIdConflictPolicy: 'USE_EXISTING',
    ...jobLabels(job),
  });
}

/** Every this many progress polls (seconds), the job's retried activities are looked at. */
const RETRY_CHECK_TICKS = 3;

/** The job's activities past their first attempt, with the failure of their last one. */
async function retryingActivities(handle: WorkflowHandle): Promise<JobRetrying[]> {
  const described = await handle.describe();
  const notes: JobRetrying[] = [];
  for (const pending of described.raw.pendingActivities ?? []) {
    const message = pending.lastFailure?.message;
    if (!message || (pending.attempt ?? 0) < 2) continue;
    notes.push({ activity: pending.activityType?.name ?? 'activity', attempt: pending.attempt ?? 0, error: message });
  }
  return notes;
}

/**
 * Follows a job to its end, reporting progress; returns its result or throws its failure. A Temporal outage is ridden
 * out (the job is durable): past `TEMPORAL_OUTAGE_LIMIT_MS` of it, a `TemporalOutageError` (exit 2).
 */
export async function followJob(handle: WorkflowHandle, reporter?: JobProgressListener): Promise<JobResult> {
  let finished = false;
  const notice = reporter?.unreachable ? (message: string) => reporter.unreachable?.(message) : printOutageNotice;
  const result = resultThroughOutage<WorkflowHandle, JobResult>(handle, notice).finally(() => {
    finished = true;
  });
  // A job that fails while a progress query is still on its way would otherwise be an unhandled rejection that kills
  // the CLI with a stack trace instead of its message; the caller gets the failure from the returned promise.
  result.catch(() => {});
  if (reporter) {
    const told = new Set<string>();
    for (let tick = 0; !finished; tick++) {
      const progress = await handle.query(progressQuery).catch(() => undefined);
      if (progress && !finished) reporter.update(progress);
      if (reporter.retrying && tick % RETRY_CHECK_TICKS === RETRY_CHECK_TICKS - 1) {
        for (const note of await retryingActivities(handle).catch(() => [])) {
          const key = `${note.activity}\n${note.error}`;
          if (told.has(key) || finished) continue;
          told.add(key);
          reporter.retrying(note);
        }
      }
      await Promise.race([delay(1000), result.catch(() => undefined)]);
    }
    // The last poll may predate the last batches: the finished job's own counts close the bar (100 % when done).
    // Bounded: a finished job whose worker has gone would leave the query waiting for an answer.
    const last = await Promise.race([handle.query(progressQuery), delay(2000).then(() => undefined)]).catch(
      () => undefined,
    );
    if (last) reporter.update(last);
    reporter.finish?.();
  }
  return result;
}
