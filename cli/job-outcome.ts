import { createHash } from 'node:crypto';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { JobResult } from '../activities/jobs/types.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import type { JobStart } from '../library/jobs.ts';
import { runFailureMessage } from '../library/run-failure.ts';

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

/** The message of a failed job: the kit's own words under Temporal's wrappers (library/run-failure.ts). */
export const jobFailureMessage = runFailureMessage;

/**
 * What a failed job's finalize recorded (its manifest's figures), which its `JobFailed` failure carries; undefined
 * when the job failed before a manifest was written.
 */
export function failedJobResult(error: unknown): JobResult | undefined {
  if (!(error instanceof WorkflowFailedError)) return undefined;
  const cause = error.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FAILURE_TYPE.jobFailed) return undefined;
  const [result] = cause.details ?? [];
  const credits = (result as { credits?: unknown } | undefined)?.credits;
  return typeof credits === 'number' ? (result as JobResult) : undefined;
}

/** What a job that failed was charged, as its manifest says: the last line a failed job's command prints. */
export function chargedMessage(result: JobResult): string {
  const unsaved = result.unsavedAnswers;
  const notSaved =
    unsaved && unsaved.credits > 0
      ? `, ${unsaved.credits} of them for answers not saved in the output (a re-run on the same worker publishes those its spool kept instead of paying again)`
      : '';
  const unknown = unsaved?.unknown_calls ? `, and ${unsaved.unknown_calls} call(s) of unknown cost` : '';
  const manifest = result.manifestRefused
    ? `its manifest could not be written either (${result.manifestRefused}); the run that finishes the job writes it`
    : `manifest ${result.manifestUrl}`;
  return `credits charged ${result.credits}${notSaved}${unknown}; ${manifest}`;
}

/** What a job pays for per item, and what one can cost (enrich and contacts: 2 per signal up to `limit`; verify: 1). */
function itemOf(job: JobStart): { noun: string; one: string; perSignal: boolean } {
  if (job.workflow === 'bulkEnrich') return { noun: 'domains', one: 'domain', perSignal: true };
  if (job.workflow === 'enrichContacts') return { noun: 'contacts', one: 'contact', perSignal: true };
  return { noun: 'addresses', one: 'address', perSignal: false };
}

/** The job's `--limit` (signals per item), for the jobs priced per signal. */
function limitOf(job: JobStart): number | undefined {
  return job.workflow === 'bulkEnrich' || job.workflow === 'enrichContacts' ? job.input.options?.limit : undefined;
}

/** The most credits one input item can cost in this job. */
export function worstCaseCreditsPerItem(job: JobStart): number {
  if (!itemOf(job).perSignal) return CREDITS.perVerifiedEmail;
  return (limitOf(job) ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
}

/**
 * What a job stopped by its credit budget tells the user: what was spent, what is left, and what to run next. Work
 * already paid for is kept, so running the same command with a higher `--max-credits` continues the same job.
 */
export function budgetMessage(job: JobStart, result: JobResult): string {
  const budget = job.workflow === 'intentExport' ? undefined : job.input.maxCredits;
  const perItem = worstCaseCreditsPerItem(job);
  const { noun, one, perSignal } = itemOf(job);
  const c = result.counts;
  // A verification part has a line for every address, those the budget did not reach as errors: count the verified.
  const done = perSignal ? c.ok + c.not_found + c.error : c.ok;
  const left = Math.max(0, c.distinct - done);
  const unlimited = perSignal && limitOf(job) === undefined;
  const worst = unlimited
    ? `each ${one} can cost up to ${perItem} credits (${MAX_SIGNALS_PER_CALL} signals × ${CREDITS.perEnrichedSignal}) without --limit`
    : `each of them can cost up to ${perItem} credits`;
  const fix = `run the same command with a higher --max-credits to continue (what is done is kept and not paid again)`;
  const limitHint = unlimited ? `; --limit N caps each ${one} at 2×N credits` : '';
  return (
    `credit budget reached: ${result.credits} of ${budget ?? '?'} credits charged, ${left} of ${c.distinct} ` +
    `distinct ${noun} not yet done and ${worst}. To go on, ${fix}${limitHint}.`
  );
}

/** The exit code of a job's or a push run's final status. */
export function exitCodeOf(result: Pick<JobResult, 'status'>): number {
  return EXIT[result.status === 'running' ? 'failed' : result.status];
}
