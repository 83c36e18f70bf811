import type { ManifestClaims } from '../run/manifest-place.ts';
import type { TableName } from '../tables/columns.ts';
import { type OutputFormat, tableExtension } from '../tables/formats.ts';
import type { PushRunRef } from './types.ts';

/**
 * Where everything of a push lives, relative to its output store. Deterministic from the push's name, the run id
 * (its scheduled time) and the batch index, so a retried run overwrites instead of duplicating.
 *
 *   <name>/_watermarks.json                                    domain → latest detected_at (or a pointer to shards)
 *   <name>/_watermarks/run-<id>/shard-NNNNN.json               shards of a large watermark set, per committing run
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/part-NNNNN.jsonl.gz  one line per new signal, with its domain
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/tables/signals/part-NNNNN.{jsonl.gz,csv,parquet}   the flat table (--format)
 *   <name>/signals/dt=YYYY-MM-DD/run-<id>/_manifest.json       written last; readers trust only manifested parts
 *   <name>/work/run-<id>/_plan.json, batch-NNNNN.json, done-NNNNN.json   the run's plan and progress
 *   <name>/work/run-<id>/answer-NNNNN.json, calls/part-NNNNN-<call>.json   saved answers, paid-call markers
 */
const pad = (index: number) => String(index).padStart(5, '0');

/** A push name is a path segment and part of a schedule id: kept to a safe alphabet. */
export const PUSH_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const watermarksKey = (name: string) => `${name}/_watermarks.json`;
export const watermarkShardKey = (name: string, runId: string, shard: number) =>
  `${name}/_watermarks/run-${runId}/shard-${pad(shard)}.json`;
export const watermarkShardsPrefix = (name: string) => `${name}/_watermarks/`;

export const runPrefix = (run: PushRunRef) => `${run.name}/signals/dt=${run.date}/run-${run.runId}/`;
export const pushPartKey = (run: PushRunRef, index: number) => `${runPrefix(run)}part-${pad(index)}.jsonl.gz`;
export const pushManifestKey = (run: PushRunRef) => `${runPrefix(run)}_manifest.json`;
/** `…/run-<id>/tables/signals/part-NNNNN.<ext>`: the flat table of part NNNNN (docs/tables.md). */
export const pushTablePartKey = (run: PushRunRef, table: TableName, index: number, format: OutputFormat) =>
  `${runPrefix(run)}tables/${table}/part-${pad(index)}${tableExtension(format, 'gzip')}`;

/**
 * A push run's manifest lies in the run folder its own `name`, `dt` and `run_id` name (activities/run/manifest-place.ts);
 * a feed run's in `feedRunPrefix`'s, with the folder of its kind as `dir`.
 */
export function runManifestClaims(
  manifest: { name: string; dt: string; run_id: string; output: string; parts: readonly { key: string }[] },
  dir = 'signals',
): ManifestClaims {
  const run = { name: manifest.name, output: manifest.output, runId: manifest.run_id, date: manifest.dt };
  return {
    folder: feedRunPrefix(run, dir).replace(/\/$/, ''),
    folderField: 'run_id',
    depth: 4,
    output: manifest.output,
    parts: manifest.parts,
  };
}

export const workPrefix = (run: PushRunRef) => `${run.name}/work/run-${run.runId}/`;
export const planKey = (run: PushRunRef) => `${workPrefix(run)}_plan.json`;
export const pushBatchKey = (run: PushRunRef, index: number) => `${workPrefix(run)}batch-${pad(index)}.json`;
export const batchDoneKey = (run: PushRunRef, index: number) => `${workPrefix(run)}done-${pad(index)}.json`;

/**
 * A batch's answer record, saved after its part and tables (in one write the output may refuse and the worker's spool
 * keep): a retry after a crash finds what it paid for. It names the paid calls it holds, as a job's part does.
 */
export const answerKey = (run: PushRunRef, index: number) => `${workPrefix(run)}answer-${pad(index)}.json`;
/** The run's paid-call markers (activities/paid/unsaved-answers.ts): one before each bulk call, settled by `finalizePushRun`. */
export const pushCallsPrefix = (run: PushRunRef) => `${workPrefix(run)}calls/`;
/** Where the worker's spool may hold a run's refused writes: its signals folder and its work folder. */
export const runFolders = (run: PushRunRef) => [runPrefix(run), workPrefix(run)];
/** The batches of catch-up round `round` (written once, like the plan). */
export const roundKey = (run: PushRunRef, round: number) => `${workPrefix(run)}_round-${round}.json`;

/**
 * A scheduled feed keeps a push's layout: `<name>/_watermarks.json` (its state), `<name>/work/run-<id>/` (plan and
 * saved answers, `answerKey`), and its lines and tables under `<name>/<companies|contacts>/dt=YYYY-MM-DD/run-<id>/`.
 */
export const feedRunPrefix = (run: PushRunRef, dir: string) => `${run.name}/${dir}/dt=${run.date}/run-${run.runId}/`;
export const feedPartKey = (run: PushRunRef, dir: string, index: number, compression?: 'gzip' | 'none') =>
  `${feedRunPrefix(run, dir)}part-${pad(index)}.jsonl${compression === 'none' ? '' : '.gz'}`;
export const feedManifestKey = (run: PushRunRef, dir: string) => `${feedRunPrefix(run, dir)}_manifest.json`;
/**
 * `…/run-<id>/tables/<companies|contacts>/part-NNNNN.<ext>`: the flat table of lines part NNNNN (`--format`); a
 * feed's table has the name of its folder.
 */
export const feedTablePartKey = (
  run: PushRunRef,
  dir: string,
  index: number,
  format: OutputFormat,
  compression?: 'gzip' | 'none',
) => `${feedRunPrefix(run, dir)}tables/${dir}/part-${pad(index)}${tableExtension(format, compression)}`;
