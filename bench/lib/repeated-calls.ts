import type { Client } from '@temporalio/client';
import type { CallRecord } from '../../sandbox/index.ts';
import { eventMs } from './history.ts';

/**
 * Why a run paid a call more than once, in lines for the bench log: every request the sandbox saw more than once
 * (same path, same `asked`), with its arrivals, statuses and credits, and every activity attempt after the first that
 * the workflow's history shows (the previous attempt's failure: a heartbeat timeout, a client timeout, an error).
 */
export async function repeatedCalls(
  client: Client,
  workflowId: string,
  calls: readonly CallRecord[],
  path: string,
): Promise<string[]> {
  const lines: string[] = [];
  const byAsk = new Map<string, CallRecord[]>();
  for (const call of calls) {
    if (call.path !== path) continue;
    const key = JSON.stringify(call.asked ?? null);
    byAsk.set(key, [...(byAsk.get(key) ?? []), call]);
  }
  for (const same of byAsk.values()) {
    if (same.length < 2) continue;
    const first = same[0]!.realMs;
    const arrivals = same.map(
      (c) => `#${c.seq} +${Math.round(c.realMs - first)} ms status ${c.status} credits ${c.credits} fault ${c.fault}`,
    );
    lines.push(`asked ${same.length}×: ${arrivals.join('; ')}`);
  }
  // The chain's last run (a night of up to DEFAULT_BATCHES_PER_RUN calls is one run).
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const spans = new Map<string, { first: number; last: number; n: number }>();
  for (const event of events ?? []) {
    const at = eventMs(event.eventTime as Parameters<typeof eventMs>[0]);
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) scheduled.set(String(event.eventId), { type, at });
    const done = event.activityTaskCompletedEventAttributes;
    const of = done ? scheduled.get(String(done.scheduledEventId)) : undefined;
    if (of) {
      const span = spans.get(of.type) ?? { first: of.at, last: at, n: 0 };
      spans.set(of.type, { first: Math.min(span.first, of.at), last: Math.max(span.last, at), n: span.n + 1 });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (!started || (started.attempt ?? 1) <= 1) continue;
    const failure = started.lastFailure;
    const why = failure?.timeoutFailureInfo
      ? `timed out (${failure.timeoutFailureInfo.timeoutType})`
      : (failure?.message ?? 'unknown');
    lines.push(`activity of event ${started.scheduledEventId} ran attempt ${started.attempt}; the one before: ${why}`);
  }
  for (const [type, span] of spans)
    lines.push(`${type}: ${span.n}× from +0 over ${Math.round(span.last - span.first)} ms`);
  return lines;
}
