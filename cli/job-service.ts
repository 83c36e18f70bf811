import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ActivityFailure,
  ChildWorkflowFailure,
  type Client,
  WorkflowFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import type { JobResult } from '../activities/jobs/types.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
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

/**
 * Exit codes: what a scheduler needs to tell a finished job from a partial or failed one. `running` is the status of
 * a job not finished yet; `no_worker` says that no worker polls the job's task queues, so it cannot progress.
 */
export const EXIT = {
  completed: 0,
  failed: 1,
  usage: 2,
  budget_exhausted: 3,
  completed_with_errors: 4,
  running: 5,
  no_worker: 6,
} as const;

/** A stable job id from what the job does, so that the same command run twice is the same job. */
export function defaultJobId(kind: string, parts: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 12);
  return `${kind}-${digest}`;
}

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

/**
 * The message of a failed job: the first failure under Temporal's wrappers (activity, child workflow), which is the
 * kit's own classified message naming the service's or the storage's problem. Not deeper: the causes below it are
 * the raw library errors it was made from ("UnknownError", a CSV parser's code), which lose the line or the bucket.
 */
export function jobFailureMessage(error: unknown): string {
  if (error instanceof WorkflowFailedError) {
    let cause: unknown = error.cause;
    while ((cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) && cause.cause instanceof Error)
      cause = cause.cause;
    return cause instanceof Error ? cause.message : String(cause);
  }
  return error instanceof Error ? error.message : String(error);
}

/** The most credits one input item can cost in this job (enrich: 2 per signal up to `limit`; verify: 1). */
export function worstCaseCreditsPerItem(job: JobStart): number {
  if (job.workflow === 'bulkEnrich') {
    return (job.input.options?.limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
  }
  return CREDITS.perVerifiedEmail;
}

/**
 * What a job stopped by its credit budget tells the user: what was spent, what is left, and what to run next. Work
 * already paid for is kept, so running the same command with a higher `--max-credits` continues the same job.
 */
export function budgetMessage(job: JobStart, result: JobResult): string {
  const budget = job.workflow === 'intentExport' ? undefined : job.input.maxCredits;
  const perItem = worstCaseCreditsPerItem(job);
  const c = result.counts;
  // A verification part has a line for every address, those the budget did not reach as errors: count the verified.
  const done = job.workflow === 'bulkEnrich' ? c.ok + c.not_found + c.error : c.ok;
  const left = Math.max(0, c.distinct - done);
  const noun = job.workflow === 'bulkEnrich' ? 'domains' : 'addresses';
  const unlimited = job.workflow === 'bulkEnrich' && job.input.options?.limit === undefined;
  const worst = unlimited
    ? `each domain can cost up to ${perItem} credits (${MAX_SIGNALS_PER_CALL} signals × ${CREDITS.perEnrichedSignal}) without --limit`
    : `each of them can cost up to ${perItem} credits`;
  const fix = `run the same command with a higher --max-credits to continue (what is done is kept and not paid again)`;
  const limitHint = unlimited ? '; --limit N caps each domain at 2×N credits' : '';
  return (
    `credit budget reached: ${result.credits} of ${budget ?? '?'} credits charged, ${left} of ${c.distinct} ` +
    `distinct ${noun} not yet done and ${worst}. To go on, ${fix}${limitHint}.`
  );
}

/** The exit code of a job's or a push run's final status. */
export function exitCodeOf(result: Pick<JobResult, 'status'>): number {
  return EXIT[result.status === 'running' ? 'failed' : result.status];
}
