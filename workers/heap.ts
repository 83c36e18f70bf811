import { setFlagsFromString } from 'node:v8';

/**
 * Caps how far V8 lets the old generation grow between full collections. Unlike the semi-space size (fixed when the
 * process starts, hence `WORKER_NODE_OPTIONS`), V8 reads this factor at every collection, so it can be set here.
 * Process-wide: only the `worker` command calls it, never `startWorker`, which may run inside someone else's process.
 */
export function applyWorkerHeapConfig(config: { heapGrowingPercent: number; workflowSemiSpaceMb: number }): void {
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // V8 sizes an isolate's young generation when it creates the isolate: this process's was fixed at start
  // (WORKER_NODE_OPTIONS), so the flag reaches only threads started after this, the workflow thread among them.
  if (config.workflowSemiSpaceMb > 0) setFlagsFromString(`--max-semi-space-size=${config.workflowSemiSpaceMb}`);
}
