import type { Client, WorkflowHandle } from '@temporalio/client';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];
type Timestamp = { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;

export function eventMs(ts: Timestamp): number {
  if (!ts) return Number.NaN;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

export interface RunHistory {
  runId: string;
  events: number;
}

/** Every run of a workflow's continue-as-new chain with its history length, first run first. */
export async function chainHistory(client: Client, workflowId: string, firstRunId: string): Promise<RunHistory[]> {
  const runs = await chainEvents(client, workflowId, firstRunId);
  return runs.map((run) => ({ runId: run.runId, events: run.events.length }));
}

/** Start and end (ms) of the first completed execution of an activity type, from the workflow's own history. */
export function activitySpan(events: HistoryEvent[], activityType: string): { startMs: number; endMs: number } {
  const scheduled = new Set<number>();
  const started = new Map<number, number>();
  for (const event of events) {
    const id = Number(event.eventId);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) scheduled.add(id);
    const start = event.activityTaskStartedEventAttributes;
    if (start && scheduled.has(Number(start.scheduledEventId))) started.set(Number(start.scheduledEventId), id);
    const done = event.activityTaskCompletedEventAttributes;
    if (done && scheduled.has(Number(done.scheduledEventId))) {
      const startedId = started.get(Number(done.scheduledEventId));
      const startEvent = events.find((e) => Number(e.eventId) === startedId);
      return { startMs: eventMs(startEvent?.eventTime as Timestamp), endMs: eventMs(event.eventTime as Timestamp) };
    }
  }
  throw new Error(`no completed ${activityType} activity in the history`);
}

export interface ActivityTiming {
  scheduledMs: number;
  startedMs: number;
  closedMs: number;
  attempt: number;
}

/** Scheduled, started and closed times of every activity of a type (closed: completed, failed or timed out). */
export function activityTimings(events: HistoryEvent[], activityType: string): ActivityTiming[] {
  const scheduled = new Map<number, number>();
  const started = new Map<number, { at: number; attempt: number }>();
  const timings: ActivityTiming[] = [];
  for (const event of events) {
    const id = Number(event.eventId);
    const at = eventMs(event.eventTime as Timestamp);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) scheduled.set(id, at);
    const start = event.activityTaskStartedEventAttributes;
    if (start && scheduled.has(Number(start.scheduledEventId))) {
      started.set(Number(start.scheduledEventId), { at, attempt: start.attempt ?? 1 });
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes;
    if (closed && scheduled.has(Number(closed.scheduledEventId))) {
      const key = Number(closed.scheduledEventId);
      timings.push({
        scheduledMs: scheduled.get(key)!,
        startedMs: started.get(key)?.at ?? Number.NaN,
        closedMs: at,
        attempt: started.get(key)?.attempt ?? 1,
      });
    }
  }
  return timings;
}

/** Every event of every run of a continue-as-new chain. */
export async function chainEvents(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<{ runId: string; events: HistoryEvent[] }[]> {
  const runs: { runId: string; events: HistoryEvent[] }[] = [];
  let runId: string | undefined = firstRunId;
  while (runId && runs.length < 10_000) {
    const handle: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
    const events: HistoryEvent[] = (await handle.fetchHistory()).events ?? [];
    runs.push({ runId, events });
    const last: HistoryEvent | undefined = events[events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}
