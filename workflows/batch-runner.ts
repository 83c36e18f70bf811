import { ActivityFailure, ApplicationFailure, condition } from '@temporalio/workflow';
import type { BatchResult, JobStatus, PartCounts } from '../activities/jobs/types.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';

/** Running totals of a batch job; carried across continue-as-new and returned by the `progress` query. */
export interface BatchTotals {
  batchesDone: number;
  batchesFailed: number;
  ok: number;
  not_found: number;
  error: number;
  credits: number;
}

export const emptyTotals = (): BatchTotals => ({
  batchesDone: 0,
  batchesFailed: 0,
  ok: 0,
  not_found: 0,
  error: 0,
  credits: 0,
});

export function addCounts(totals: BatchTotals, result: BatchResult): void {
  const c: PartCounts = result.counts;
  if (!result.partial) totals.batchesDone += 1;
  if (result.failed) totals.batchesFailed += 1;
  totals.ok += c.ok;
  totals.not_found += c.not_found;
  totals.error += c.error;
  totals.credits += c.credits;
}

export interface WindowOptions {
  /** First batch index to schedule in this run. */
  from: number;
  /** Number of batches of the job; with `totalLater`, those known so far. */
  total: number;
  /**
   * The job's number of batches once its whole input is prepared, while the first `total` already run: scheduling
   * past `total` waits for it. A rejection stops scheduling like a fatal batch failure.
   */
  totalLater?: Promise<number>;
  /** At most this many batches in flight. */
  concurrency: number;
  /** At most this many batches scheduled in this run (then the caller continues as new). */
  limit: number;
  /** A batch is started only if everything in flight plus it, at their worst, stays within this. */
  maxCredits?: number;
  /** The most credits one batch could cost. */
  worstCaseCredits: (index: number) => number;
  run: (index: number) => Promise<BatchResult>;
  /**
   * For a batch whose worst case no longer fits the budget: runs it with a cap on its credits, sending only the
   * items that fit at their worst. A `partial` result means the budget is spent. Without it, such a batch waits
   * for a higher budget.
   */
  capped?: { run: (index: number, creditCap: number) => Promise<BatchResult>; worstCaseItem: number };
  totals: BatchTotals;
  /** Called whenever a batch settled and `totals` changed (the job shows its progress then). */
  onSettled?: () => void;
}

export interface WindowOutcome {
  /** The next batch index not yet scheduled. */
  next: number;
  budgetExhausted: boolean;
  /** The first error that stopped scheduling (a fatal, non-retryable failure), if any. */
  fatal?: unknown;
}

/**
 * Runs batches through a sliding window: keeps `concurrency` in flight, never starts one that could take the
 * credit total over `maxCredits`, and stops scheduling at the first fatal error (in-flight batches still finish).
 */
export async function runWindow(options: WindowOptions): Promise<WindowOutcome> {
  const { concurrency, limit, maxCredits, totals } = options;
  let total = options.total;
  let totalKnown = options.totalLater === undefined;
  const reserved = new Map<number, number>();
  let next = options.from;
  let scheduled = 0;
  let fatal: unknown;
  let budgetExhausted = false;
  let settled = 0;

  const reservedTotal = () => {
    let sum = 0;
    for (const value of reserved.values()) sum += value;
    return sum;
  };

  const track = (index: number, reservation: number, result: Promise<BatchResult>) => {
    scheduled += 1;
    reserved.set(index, reservation);
    result.then(
      (outcome) => {
        reserved.delete(index);
        addCounts(totals, outcome);
        if (outcome.partial) budgetSpent = true;
        settled += 1;
        options.onSettled?.();
      },
      (error: unknown) => {
        reserved.delete(index);
        fatal ??= error;
        settled += 1;
      },
    );
  };
  let budgetSpent = false;
  options.totalLater?.then(
    (whole) => {
      total = whole;
      totalKnown = true;
    },
    (error: unknown) => {
      fatal ??= error;
      totalKnown = true;
    },
  );

  for (;;) {
    while (!budgetSpent && fatal === undefined && next < total && scheduled < limit && reserved.size < concurrency) {
      const cost = options.worstCaseCredits(next);
      if (maxCredits !== undefined && totals.credits + reservedTotal() + cost > maxCredits) {
        // A budget that cannot pay for a whole batch at its worst can still pay for part of one: once nothing
        // else is in flight, the batch runs capped at what is left and sends only the items that fit.
        const left = maxCredits - totals.credits;
        if (reserved.size === 0 && options.capped && left >= options.capped.worstCaseItem) {
          const index = next++;
          track(index, left, options.capped.run(index, left));
        } else {
          budgetExhausted = reserved.size === 0;
        }
        break;
      }
      const index = next++;
      track(index, cost, options.run(index));
    }
    if (reserved.size === 0) {
      if (budgetSpent) budgetExhausted = true;
      if (budgetExhausted || fatal !== undefined || (next >= total && totalKnown) || scheduled >= limit) break;
      if (next < total) continue;
    }
    const seen = settled;
    const known = totalKnown;
    await condition(() => settled !== seen || totalKnown !== known);
  }
  return fatal === undefined ? { next, budgetExhausted } : { next, budgetExhausted, fatal };
}

/** How a job that ran its window ends: a fatal error, the budget, failed batches, or a clean finish. */
export function finalStatus(outcome: WindowOutcome, totals: BatchTotals): Exclude<JobStatus, 'running'> {
  if (outcome.fatal !== undefined) return 'failed';
  if (outcome.budgetExhausted) return 'budget_exhausted';
  return totals.batchesFailed > 0 ? 'completed_with_errors' : 'completed';
}

/** How a job or push run ended, as its finalize activity records it. */
export interface RunEnding {
  status: Exclude<JobStatus, 'running'>;
  /** The fatal failure's message, when the run failed. */
  error?: string;
}

/**
 * Ends a job or push run that ran its window: `finalize` (its finalize activity) records the ending, `setPhase`
 * follows along for the progress query, and a failed run then fails the workflow (`JobFailed`, with the finalize
 * result as details). `what` names the run in that failure (`job <id>`).
 */
export async function finishRun<R extends { status: JobStatus }>(
  outcome: WindowOutcome,
  totals: BatchTotals,
  what: string,
  setPhase: (phase: 'finalizing' | JobStatus) => void,
  finalize: (ending: RunEnding) => Promise<R>,
): Promise<R> {
  const status = finalStatus(outcome, totals);
  const error = outcome.fatal === undefined ? undefined : failureMessage(outcome.fatal);
  setPhase('finalizing');
  const result = await finalize(error === undefined ? { status } : { status, error });
  // What the run was charged, as its manifest counts it: also the answers of batches that failed (a refused write).
  const credits = (result as { credits?: unknown }).credits;
  if (typeof credits === 'number') totals.credits = credits;
  setPhase(result.status);
  if (error !== undefined)
    throw ApplicationFailure.nonRetryable(`${what} failed: ${error}`, FAILURE_TYPE.jobFailed, result);
  return result;
}

/** The innermost message of an activity failure, which is the service's or the storage's own words. */
export function failureMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
