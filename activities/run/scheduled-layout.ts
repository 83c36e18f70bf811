import type { ScheduledRunRef } from './types.ts';
import type { MarkerFolder } from './unsaved-answers.ts';

/**
 * What every scheduled run (a push, a feed, a sync night) keeps under its name, relative to its output store: its state and its
 * work folder. Deterministic from the name and the run id (its scheduled time), so that a retried run overwrites
 * instead of duplicating. Where each kind writes what it delivers is its own (activities/push/layout.ts,
 * activities/feeds/layout.ts).
 *
 *   <name>/_watermarks.json                               key → the time it is complete through (or a pointer to shards)
 *   <name>/_watermarks/run-<id>/shard-NNNNN.json          shards of a large state, per committing run
 *   <name>/work/run-<id>/_plan.json                       the run's plan, written once
 *   <name>/work/run-<id>/answer-NNNNN.json                saved answers
 *   <name>/work/run-<id>/calls/part-NNNNN-<call>.json     paid-call markers
 */
const pad = (index: number) => String(index).padStart(5, '0');

/** A schedule's name is a path segment and part of a schedule id: kept to a safe alphabet. */
export const SCHEDULE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const watermarksKey = (name: string) => `${name}/_watermarks.json`;
export const watermarkShardKey = (name: string, runId: string, shard: number) =>
  `${name}/_watermarks/run-${runId}/shard-${pad(shard)}.json`;
export const watermarkShardsPrefix = (name: string) => `${name}/_watermarks/`;

/** A run as its work folder knows it: the schedule's name and the run id. */
export type RunFolderRef = Pick<ScheduledRunRef, 'name' | 'runId'>;

export const workPrefix = (run: RunFolderRef) => `${run.name}/work/run-${run.runId}/`;
export const planKey = (run: RunFolderRef) => `${workPrefix(run)}_plan.json`;
/**
 * A call's or batch's saved answer, written after what it delivers (in one write the output may refuse and the
 * worker's spool keep): a retry after a crash finds what it paid for. It names the paid calls it holds, as a job's
 * part does.
 */
export const answerKey = (run: RunFolderRef, index: number) => `${workPrefix(run)}answer-${pad(index)}.json`;
/** The run's paid-call markers (activities/run/unsaved-answers.ts): one before each paid call, settled at finalize. */
export const callsPrefix = (run: RunFolderRef) => `${workPrefix(run)}calls/`;
/** Where the paid-call markers of a scheduled run's finalize request are. */
export const scheduledRunMarkers = (request: { run: ScheduledRunRef }): MarkerFolder => ({
  callsPrefix: callsPrefix(request.run),
});
