import { ApplicationFailure, ContinueAsNew, isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/registry.ts';
import type { RunAlert } from '../activities/run-alert.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';
import { failureMessage } from './batch-runner.ts';

/**
 * Runs that started before a schedule's alerts existed replay without the step (a schedule without `--notify` never
 * reaches it either).
 */
export const RUN_ALERT_PATCH = 'scheduled-run-alert';

/** Where a scheduled run's alert goes and what names the run in it. */
export interface AlertTarget {
  url: string;
  schedule: string;
  kind: string;
  taskQueue: string;
}

/** What a finished run tells its alert: how it ended, its counts and files (its result's, as each kind has them). */
export interface AlertFacts {
  status: string;
  runId: string;
  counts?: Record<string, unknown>;
  credits?: number;
  files?: Record<string, string>;
  /** Why, when the ending's own words are not enough (a write-back's error). */
  reason?: string;
}

/** The endings that alert: a failure, a stop on the budget, failed batches (records left as they were). */
const ALERTING: Record<string, RunAlert['status'] | undefined> = {
  failed: 'failed',
  budget_exhausted: 'budget_exhausted',
  completed_with_errors: 'completed_with_errors',
  rejected_records: 'rejected_records',
};

const REASONS: Record<string, string> = {
  budget_exhausted: 'the run stopped on its credit budget (--max-credits); the next run carries on',
  completed_with_errors:
    'some batches failed after their retries; their records keep what they held, the next run asks them again',
  rejected_records: "the CRM rejected records of the night's write-back; its report names each record and why",
};

/**
 * The last step of a scheduled run with `--notify`: runs `run`, and posts one alert (activities/run-alert.ts) when it
 * failed, stopped on its budget or ended with failed batches, then ends as `run` ended. A continue-as-new or a
 * cancellation is not an ending. An alert that cannot be delivered after its retries is logged; the run's outcome
 * stands.
 */
export async function withRunAlert<R>(
  target: AlertTarget,
  runId: string,
  run: () => Promise<R>,
  factsOf: (result: R) => AlertFacts,
): Promise<R> {
  let result: R;
  try {
    result = await run();
  } catch (error) {
    if (error instanceof ContinueAsNew || isCancellation(error)) throw error;
    const carried = error instanceof ApplicationFailure && error.type === FAILURE_TYPE.jobFailed;
    const facts = carried && error.details?.[0] ? factsOf(error.details[0] as R) : { status: 'failed', runId };
    await alert(target, { ...facts, status: 'failed' }, failureMessage(error));
    throw error;
  }
  const facts = factsOf(result);
  if (ALERTING[facts.status]) await alert(target, facts, facts.reason ?? REASONS[facts.status] ?? facts.status);
  return result;
}

async function alert(target: AlertTarget, facts: AlertFacts, reason: string): Promise<void> {
  if (!patched(RUN_ALERT_PATCH)) return;
  const { notifyRunOutcome } = proxyActivities<WebhookActivities>({
    taskQueue: target.taskQueue,
    startToCloseTimeout: '1 minute',
    // The kit's delivery retries: a refused or unanswered POST is tried again, 6 attempts over about 10 minutes.
    retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumAttempts: 6 },
  });
  const { url, schedule, kind } = target;
  try {
    const { reason: _own, ...told } = facts;
    await notifyRunOutcome({ url, schedule, kind, ...told, status: ALERTING[facts.status] ?? 'failed', reason });
  } catch (error) {
    log.warn('the run alert was not delivered', { schedule, runId: facts.runId, error: failureMessage(error) });
  }
}
