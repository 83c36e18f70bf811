import type { FeedKind } from '../../contract/kinds.ts';
import { type ManifestClaims, type RunManifestIds, runManifestClaims } from '../../contract/manifest-place.ts';
import type { FeedTableName } from '../../contract/tables/feeds.ts';
import { type OutputFormat, tableExtension } from '../tables/formats.ts';
import type { FeedRunRef } from './types.ts';

/**
 * Where a feed writes, relative to its output store, beside the state and work folder every scheduled run keeps
 * (activities/run/scheduled-layout.ts: `_watermarks.json` is a feed's state, `work/run-<id>/` its plan, saved answers
 * and paid-call markers). Its lines and tables go to a folder named for what it delivers:
 *
 *   <name>/<companies|contacts>/dt=YYYY-MM-DD/run-<id>/part-NNNNN.jsonl.gz                 one line per new entry
 *   <name>/<companies|contacts>/dt=YYYY-MM-DD/run-<id>/tables/<companies|contacts>/part-NNNNN.<ext>   (--format)
 *   <name>/<companies|contacts>/dt=YYYY-MM-DD/run-<id>/_manifest.json                     written last
 */
const pad = (index: number) => String(index).padStart(5, '0');

/** The folder a feed's lines go to under its name, and the name of its flat table. */
export const feedDir = (kind: FeedKind): FeedTableName => (kind === 'company-search' ? 'companies' : 'contacts');

export const feedRunPrefix = (run: FeedRunRef) => `${run.name}/${feedDir(run.kind)}/dt=${run.date}/run-${run.runId}/`;
export const feedPartKey = (run: FeedRunRef, index: number, compression?: 'gzip' | 'none') =>
  `${feedRunPrefix(run)}part-${pad(index)}.jsonl${compression === 'none' ? '' : '.gz'}`;
export const feedManifestKey = (run: FeedRunRef) => `${feedRunPrefix(run)}_manifest.json`;
/** `…/run-<id>/tables/<companies|contacts>/part-NNNNN.<ext>`: the flat table of lines part NNNNN (`--format`). */
export const feedTablePartKey = (run: FeedRunRef, index: number, format: OutputFormat, compression?: 'gzip' | 'none') =>
  `${feedRunPrefix(run)}tables/${feedDir(run.kind)}/part-${pad(index)}${tableExtension(format, compression)}`;

/** A feed run's manifest lies in the run folder its own `name`, `kind`, `dt` and `run_id` make (contract/manifest-place.ts). */
export const feedManifestClaims = (manifest: RunManifestIds & { kind: FeedKind }): ManifestClaims =>
  runManifestClaims(manifest, (run) => feedRunPrefix({ ...run, kind: manifest.kind }));
