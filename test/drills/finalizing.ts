/**
 * For drills whose late answers must arrive while the job is finalizing (the moment a job used to count them as of
 * unknown cost): waits until the job's `finalizeJob` activity runs, then a little longer.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { until } from '../../testkit/kill-drill.ts';

/** How long finalize runs before the late answers arrive: it takes well under a second when it does not wait. */
export const FINALIZE_GRACE_MS = 3_000;

/** The job's lines parts in its output directory (`<dir>/<jobId>/parts/part-N.jsonl[.gz]`). */
export function savedParts(outputDir: string, jobId: string): number {
  try {
    return readdirSync(join(outputDir, jobId, 'parts')).filter((name) => /^part-\d+\.jsonl(\.gz)?$/.test(name)).length;
  } catch {
    return 0;
  }
}

/** Whether the workflow has ended, or runs its `finalizeJob` activity (Temporal lists it among the pending ones). */
async function finalizingOrEnded(client: Client, workflowId: string): Promise<boolean> {
  const described = await client.workflow.getHandle(workflowId).describe();
  if (described.status.name !== 'RUNNING') return true;
  return (described.raw.pendingActivities ?? []).some(
    (activity) => activity.activityType?.name === 'finalizeJob' && activity.state === 2, // STARTED
  );
}

/**
 * Waits until every batch of the job is saved and its finalize step has run for `FINALIZE_GRACE_MS` (or the job has
 * ended). Returns whether it had ended: a job that finalizes without waiting for the late answers ends by then.
 */
export async function untilFinalizing(
  client: Client,
  workflowId: string,
  parts: { dir: string; batches: number },
): Promise<boolean> {
  await until('every batch to be saved', () => savedParts(parts.dir, workflowId) >= parts.batches, 90_000, 20);
  await until('the job to finalize', () => finalizingOrEnded(client, workflowId), 60_000, 100);
  const deadline = Date.now() + FINALIZE_GRACE_MS;
  for (;;) {
    const described = await client.workflow.getHandle(workflowId).describe();
    if (described.status.name !== 'RUNNING') return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}
