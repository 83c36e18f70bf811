/** What the promise tests share: one job environment per file and a way to run a job on its workers. */
import type { JobResult } from '../../activities/jobs/types.ts';
import type { JobEnv } from '../../testkit/job-env.ts';

/** Runs `workflow` as `workflowId` on the environment's queues (its input is told both) and waits for its result. */
export function runOnEnvQueues<R>(env: JobEnv, workflow: string, workflowId: string, input: object): Promise<R> {
  const c = env.config();
  return env.client.workflow.execute(workflow, {
    workflowId,
    taskQueue: c.taskQueue,
    args: [{ ...input, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  }) as Promise<R>;
}

/** Runs workflow `workflow` as job `input.jobId` on the environment's queues and waits for its result. */
export function runJob<T>(env: JobEnv, workflow: string, input: T & { jobId: string }): Promise<JobResult> {
  return runOnEnvQueues<JobResult>(env, workflow, input.jobId, input);
}

/** Addresses at company domains with duplicates (spaces, an upper-case domain), free `unknown` ones and junk. */
export function addressList(count: number, salt: string): { rows: string[]; distinct: string[]; invalid: number } {
  const distinct: string[] = [];
  for (let i = 0; i < count; i++) {
    const local = i % 97 === 0 ? `unknown${i}` : `person${i}.${salt}`;
    distinct.push(`${local}@company${i % 300}.com`);
  }
  const rows = [...distinct];
  for (let i = 0; i < count; i += 37) rows.push(`  ${distinct[i]!.replace(/@.*/, (d) => d.toUpperCase())} `);
  const junk = ['not-an-email', 'foo@', '@bar.com'];
  rows.push(...junk);
  return { rows, distinct, invalid: junk.length };
}
