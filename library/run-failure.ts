import {
  ActivityFailure,
  ChildWorkflowFailure,
  type Client,
  WorkflowFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';

/**
 * The message of a failed run: the first failure under Temporal's wrappers (a workflow's, an activity's, a child
 * workflow's), which is the kit's own classified message naming the file, the row or byte, the column and the fix.
 * Not deeper: the causes below it are the raw library errors it was made from, which lose the line or the bucket.
 */
export function runFailureMessage(error: unknown): string {
  let cause: unknown = error instanceof WorkflowFailedError ? error.cause : error;
  while ((cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) && cause.cause instanceof Error)
    cause = cause.cause;
  return cause instanceof Error ? cause.message : String(cause);
}

/** How a run that did not complete ended, and why, as `schedule state` and `describe` show it. */
export interface RunFailure {
  workflowId: string;
  status: string;
  startedAt: string;
  closedAt: string | null;
  error: string;
}

const UNFINISHED = new Set(['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED']);

/**
 * The latest of the given runs (by workflow id; each followed to the last run of its chain) when it did not
 * complete, with its reason; null when it completed, is still running, or none of them exists.
 */
export async function lastRunFailure(client: Client, workflowIds: readonly string[]): Promise<RunFailure | null> {
  const described = await Promise.all(
    [...new Set(workflowIds)].map(async (workflowId) => {
      try {
        return await client.workflow.getHandle(workflowId).describe();
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      }
    }),
  );
  const latest = described
    .filter((run) => run !== undefined)
    .sort((a, b) => b.startTime.getTime() - a.startTime.getTime())[0];
  if (!latest || !UNFINISHED.has(latest.status.name)) return null;
  let error = latest.status.name.toLowerCase();
  try {
    await client.workflow.getHandle(latest.workflowId, latest.runId).result();
  } catch (failure) {
    error = runFailureMessage(failure);
  }
  return {
    workflowId: latest.workflowId,
    status: latest.status.name.toLowerCase(),
    startedAt: latest.startTime.toISOString(),
    closedAt: latest.closeTime?.toISOString() ?? null,
    error,
  };
}
