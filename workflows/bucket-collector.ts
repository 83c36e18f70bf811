/**
 * bucketCollector: one long-running workflow per bucket destination (workflow id `collector-<dest>`), fed by
 * signalWithStart (`collectEvent` with a signal id; the event itself is staged in the bucket: claim-check).
 *
 * It buffers signal ids and rotates a part when `maxEvents` ids are buffered or `maxAgeMs` after the first id of
 * the part arrived, whichever comes first. Part `seq` is this workflow's own counter (carried across
 * continue-as-new), so the part key `<prefix>/collector/<dest>/part-<seq>.jsonl` is deterministic: a retried or
 * replayed write overwrites the same object. Ids already in a recent part (a bounded window) or in the buffer are
 * ignored, so re-sent input does not produce a second copy. After `partsPerRun` parts (or when Temporal suggests it)
 * the workflow continues as new with its small state.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CollectorActivities, CollectorStartArgs } from '../activities/collector.ts';
import { FAILURE_TYPE } from '../connectors/errors.ts';

export interface CollectorState {
  seq: number;
  /** Ids waiting for the next part, in arrival order. */
  pending: string[];
  /** Workflow time (ms) the first pending id arrived. */
  firstAt?: number;
  /** Ids written in recent parts, oldest first (bounded by `dedupeWindow`). */
  recent: string[];
  /** Totals over the collector's whole life. */
  parts: number;
  events: number;
}

export interface BucketCollectorInput extends CollectorStartArgs {
  /** Continue as new after this many parts in one run (default 100). */
  partsPerRun?: number;
  /** How many recently written ids are remembered to drop re-sent events (default 5 000). */
  dedupeWindow?: number;
  state?: CollectorState;
}

export interface CollectorStatus {
  destinationId: string;
  seq: number;
  buffered: number;
  parts: number;
  events: number;
  duplicatesIgnored: number;
}

export const collectEventSignal = defineSignal<[{ signalId: string }]>('collectEvent');
/** Writes the buffered events as a part now (tests, shutdown). */
export const flushCollectorSignal = defineSignal('flushCollector');
export const collectorStatusQuery = defineQuery<CollectorStatus>('collectorStatus');

export async function bucketCollector(input: BucketCollectorInput): Promise<never> {
  const { destinationId, maxEvents, maxAgeMs } = input;
  const partsPerRun = input.partsPerRun ?? 100;
  const dedupeWindow = input.dedupeWindow ?? 5_000;
  const { writeCollectorPart } = proxyActivities<CollectorActivities>({
    startToCloseTimeout: '10 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      nonRetryableErrorTypes: [FAILURE_TYPE.destinationNotConfigured],
    },
  });

  const state: CollectorState = {
    seq: input.state?.seq ?? 0,
    pending: [...(input.state?.pending ?? [])],
    recent: [...(input.state?.recent ?? [])],
    parts: input.state?.parts ?? 0,
    events: input.state?.events ?? 0,
    ...(input.state?.firstAt !== undefined ? { firstAt: input.state.firstAt } : {}),
  };
  const pendingSet = new Set(state.pending);
  const recentSet = new Set(state.recent);
  let flushRequested = false;
  let duplicatesIgnored = 0;

  setHandler(collectEventSignal, ({ signalId }) => {
    if (pendingSet.has(signalId) || recentSet.has(signalId)) {
      duplicatesIgnored++;
      return;
    }
    if (state.pending.length === 0) state.firstAt = Date.now();
    state.pending.push(signalId);
    pendingSet.add(signalId);
  });
  setHandler(flushCollectorSignal, () => {
    flushRequested = true;
  });
  setHandler(collectorStatusQuery, () => ({
    destinationId,
    seq: state.seq,
    buffered: state.pending.length,
    parts: state.parts,
    events: state.events,
    duplicatesIgnored,
  }));

  let partsThisRun = 0;
  for (;;) {
    if (state.pending.length === 0) {
      await condition(() => state.pending.length > 0 || flushRequested);
      if (state.pending.length === 0) {
        flushRequested = false;
        continue;
      }
    }
    const firstAt = state.firstAt ?? Date.now();
    const remaining = firstAt + maxAgeMs - Date.now();
    if (state.pending.length < maxEvents && !flushRequested && remaining > 0) {
      await condition(() => state.pending.length >= maxEvents || flushRequested, remaining);
    }
    flushRequested = false;

    const batch = state.pending.slice(0, maxEvents);
    await writeCollectorPart({ destinationId, seq: state.seq, signalIds: batch });
    // Ids that arrived while the part was written stay pending for the next part.
    state.pending.splice(0, batch.length);
    for (const id of batch) {
      pendingSet.delete(id);
      recentSet.add(id);
      state.recent.push(id);
    }
    while (state.recent.length > dedupeWindow) recentSet.delete(state.recent.shift()!);
    state.seq++;
    state.parts++;
    state.events += batch.length;
    partsThisRun++;
    if (state.pending.length > 0) state.firstAt = Date.now();
    else delete state.firstAt;

    if (partsThisRun >= partsPerRun || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof bucketCollector>({ ...input, state });
    }
  }
}
