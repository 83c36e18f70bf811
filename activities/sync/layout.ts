import { type ManifestClaims, type RunManifestIds, runManifestClaims } from '../../contract/manifest-place.ts';
import { workPrefix } from '../run/scheduled-layout.ts';
import { type OutputFormat, tableExtension } from '../tables/formats.ts';
import type { SyncRunRef } from './types.ts';

/**
 * Where everything of a nightly CRM sync lives, relative to its output store. Deterministic from the schedule's name,
 * the run id (its scheduled time) and the batch index, so that a retried run overwrites instead of duplicating.
 *
 *   <name>/_state.json                                   pointer: the committed state and the one before it
 *   <name>/_state/run-<id>.sqlite.gz                     the state database (state/sync-db.ts): per company, per record,
 *                                                        per resolved identifier
 *   <name>/runs/dt=YYYY-MM-DD/run-<id>/rows.csv          every record of the night's export, once
 *   <name>/runs/dt=YYYY-MM-DD/run-<id>/changes.csv       only the new and changed records
 *   <name>/runs/dt=YYYY-MM-DD/run-<id>/gone.csv          the ids of the records gone from the export since the last night
 *   <name>/runs/dt=YYYY-MM-DD/run-<id>/tables/rows/part-NNNNN.<ext>   the rows table in the `--format`s asked
 *   <name>/runs/dt=YYYY-MM-DD/run-<id>/_manifest.json    written after the files, before the state
 *   <name>/work/run-<id>/_stage.json, records.jsonl.gz, resolve(d)-NNNNN.json, batch-NNNNN.json
 *   <name>/work/run-<id>/_plan.json, answer-NNNNN.json, calls/   as every scheduled run (run/scheduled-layout.ts)
 */
const pad = (index: number) => String(index).padStart(5, '0');

// The state's own keys are the state module's (activities/state/layout.ts); named here too, as every key of a night.
export { legacySyncStateKey, syncOpenRunKey, syncStateKey, syncStatePointerKey } from '../state/layout.ts';

export const syncRunPrefix = (run: SyncRunRef) => `${run.name}/runs/dt=${run.date}/run-${run.runId}/`;
export const syncRowsKey = (run: SyncRunRef) => `${syncRunPrefix(run)}rows.csv`;
export const syncChangesKey = (run: SyncRunRef) => `${syncRunPrefix(run)}changes.csv`;
export const syncGoneKey = (run: SyncRunRef) => `${syncRunPrefix(run)}gone.csv`;
/** The ids of the night's new, changed and gone records, one a line with which it is (`records.ids`). */
export const syncIdsKey = (run: SyncRunRef) => `${syncRunPrefix(run)}ids.csv`;
export const syncManifestKey = (run: SyncRunRef) => `${syncRunPrefix(run)}_manifest.json`;

/** Where a night's manifest lies by its own ids (`<name>/runs/dt=<day>/run-<id>/`), its parts in that folder. */
export const syncManifestClaims = (manifest: RunManifestIds & { scheduled_at: string }): ManifestClaims =>
  runManifestClaims(manifest, (run) => syncRunPrefix({ ...run, at: manifest.scheduled_at }));
export const syncTableKey = (run: SyncRunRef, format: OutputFormat, index = 0) =>
  `${syncRunPrefix(run)}tables/rows/part-${pad(index)}${tableExtension(format, 'gzip')}`;

/** The plan before the calls are packed (records read, resolutions to make). */
export const syncStageKey = (run: SyncRunRef) => `${workPrefix(run)}_stage.json`;
/** Identifiers to resolve (batch NNNNN) and what they resolved to. */
export const syncResolveKey = (run: SyncRunRef, index: number) => `${workPrefix(run)}resolve-${pad(index)}.json`;
export const syncResolvedKey = (run: SyncRunRef, index: number) => `${workPrefix(run)}resolved-${pad(index)}.json`;
export const syncRecordsKey = (run: SyncRunRef) => `${workPrefix(run)}records.jsonl.gz`;
export const syncBatchKey = (run: SyncRunRef, index: number) => `${workPrefix(run)}batch-${pad(index)}.json`;
/** Where the worker's spool may hold a run's refused writes. */
export const syncRunFolders = (run: SyncRunRef) => [workPrefix(run)];
/** Where the worker's spool may hold refused writes of any run of the schedule. */
export const syncWorkRoot = (name: string) => `${name}/work/`;
