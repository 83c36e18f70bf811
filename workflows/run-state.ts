import type { proxyActivities } from '@temporalio/workflow';
import type { ApiActivities, JobActivities } from '../activities/registry.ts';

export type JobActivityProxy = ReturnType<typeof proxyActivities<JobActivities>>;
export type ApiActivityProxy = ReturnType<typeof proxyActivities<ApiActivities>>;

/** What the steps of one run of a scheduled push or feed share: its input, its reference, its activities, its times. */
export interface ScheduledRunState<Input, Ref> {
  readonly input: Input;
  readonly run: Ref;
  readonly jobs: JobActivityProxy;
  readonly api: ApiActivityProxy;
  /** The schedule's nominal time of the run: it names the run's keys. */
  readonly scheduledAt: string;
  readonly startedAt: string;
}
