import { type ManifestClaims, type RunManifestIds, runManifestClaims } from '../../contract/manifest-place.ts';
import type { TableName } from '../../contract/tables/columns.ts';
import { workPrefix } from '../run/scheduled-layout.ts';
import { type OutputFormat, tableExtension } from '../tables/formats.ts';
import type { PushRunRef } from './types.ts';

/**
 * Where a push writes, relative to its output store, beside the state and work folder every scheduled run keeps
 * (activities/run/scheduled-layout.ts). Deterministic from the push's name, the run id (its scheduled time) and the
 * batch index, so a retried run overwrites instead of duplicating.
 *
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/part-NNNNN.jsonl.gz  one line per new signal, with its domain
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/tables/signals/part-NNNNN.{jsonl.gz,csv,parquet}   the flat table (--format)
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/_manifest.json       written last; readers trust only manifested parts
 *   <name>/work/run-<id>/batch-NNNNN.json, done-NNNNN.json, _round-N.json   the run's batches and progress
 */
const pad = (index: number) => String(index).padStart(5, '0');

export const runPrefix = (run: PushRunRef) => `${run.name}/signals/dt=${run.date}/run-${run.runId}/`;
export const pushPartKey = (run: PushRunRef, index: number) => `${runPrefix(run)}part-${pad(index)}.jsonl.gz`;
export const pushManifestKey = (run: PushRunRef) => `${runPrefix(run)}_manifest.json`;
/** `…/run-<id>/tables/signals/part-NNNNN.<ext>`: the flat table of part NNNNN (docs/tables.md). */
export const pushTablePartKey = (run: PushRunRef, table: TableName, index: number, format: OutputFormat) =>
  `${runPrefix(run)}tables/${table}/part-${pad(index)}${tableExtension(format, 'gzip')}`;

/** A push run's manifest lies in the run folder its own `name`, `dt` and `run_id` make (contract/manifest-place.ts). */
export const pushManifestClaims = (manifest: RunManifestIds): ManifestClaims => runManifestClaims(manifest, runPrefix);

export const pushBatchKey = (run: PushRunRef, index: number) => `${workPrefix(run)}batch-${pad(index)}.json`;
export const batchDoneKey = (run: PushRunRef, index: number) => `${workPrefix(run)}done-${pad(index)}.json`;

/** Where the worker's spool may hold a run's refused writes: its signals folder and its work folder. */
export const runFolders = (run: PushRunRef) => [runPrefix(run), workPrefix(run)];
/** The batches of catch-up round `round` (written once, like the plan). */
export const roundKey = (run: PushRunRef, round: number) => `${workPrefix(run)}_round-${round}.json`;
