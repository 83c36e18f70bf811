/**
 * Where a schedule's incremental state lives under its output, relative to the output store (the watermark state's
 * keys are every scheduled run's, `run/scheduled-layout.ts`):
 *
 *   <name>/_state.json                  a sync's pointer: the committed state and the one before it
 *   <name>/_state/run-<id>.sqlite.gz    a sync's state database (sync-db.ts)
 *   <name>/_state/run-<id>.json.gz      a sync's state of the release before the database (read once, sync-legacy.ts)
 *   <name>/_open-run.json               the sync night that planned last (stopped-run.ts)
 *   <name>/work/_stopped.json           the feed run an output stopped (stopped-run.ts)
 */
export const syncStatePointerKey = (name: string) => `${name}/_state.json`;
export const syncStateKey = (name: string, runId: string) => `${name}/_state/run-${runId}.sqlite.gz`;
export const legacySyncStateKey = (name: string, runId: string) => `${name}/_state/run-${runId}.json.gz`;
export const syncOpenRunKey = (name: string) => `${name}/_open-run.json`;
export const stoppedFeedRunKey = (name: string) => `${name}/work/_stopped.json`;
