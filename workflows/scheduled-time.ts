import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';

/**
 * Set by Temporal on every workflow a schedule starts: its nominal time, to the second (also for trigger and
 * backfill). The workflow id of such a run ends with the same time.
 */
const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/**
 * A scheduled run's nominal time: the schedule's (search attribute; or the time suffix Temporal gives a scheduled
 * workflow's id), else `runAt`, else when the workflow chain started (stable across retries).
 */
export function scheduledTime(runAt: string | undefined): string {
  const info = workflowInfo();
  const fromSchedule = info.typedSearchAttributes.get(SCHEDULED_START);
  if (fromSchedule) return new Date(fromSchedule).toISOString();
  const suffix = /-(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/.exec(info.workflowId)?.[1];
  if (suffix && !Number.isNaN(Date.parse(suffix))) return new Date(suffix).toISOString();
  if (runAt && !Number.isNaN(Date.parse(runAt))) return new Date(runAt).toISOString();
  return info.startTime.toISOString();
}
