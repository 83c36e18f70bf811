import { proxyActivities } from '@temporalio/workflow';
import type { SmokeActivities } from './smoke-activities.ts';

const { greet } = proxyActivities<SmokeActivities>({ startToCloseTimeout: '30 seconds' });

/** Calls one activity and returns its answer: the smallest proof that workflows, workers and the server agree. */
export async function smokeWorkflow(name: string): Promise<string> {
  return await greet(name);
}
