import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { readPlacedManifest } from '../../contract/manifest-read.ts';
import { PushManifestSchema } from '../../contract/manifest-schemas.ts';
import type { PartSpool } from '../paid/spool.ts';
import { readPart } from '../run/parts.ts';
import { answerKey } from '../run/scheduled-layout.ts';
import { readWatermarkState } from '../state/watermarks.ts';
import { pushPartIdentity, recordSavedAnswer } from './fetch.ts';
import { finalizePushRun } from './finalize.ts';
import { pushManifestClaims, roundKey } from './layout.ts';
import type { PushFilters, PushManifest, PushRound, PushRunRef } from './types.ts';

export interface RecoverKeptRequest {
  /** The run about to plan. */
  run: PushRunRef;
  /** Its filters: an earlier run's kept answer is used only if it was asked with the same. */
  filters: PushFilters;
}

/**
 * Before a run plans from the watermarks: answers that an earlier run of the push paid for and its output refused,
 * kept in this worker's spool (activities/paid/spool.ts), are published into that run's folders, and that run is
 * finalized again with them (its manifest rewritten, its watermarks moved past them), so that this run does not ask
 * and pay for them again. Only the run that committed the watermarks last is finalized again: an older one's
 * outcomes would overwrite what later runs remembered. Its status stays what it was (it still stopped early). Returns
 * the runs finalized again.
 */
export async function recoverKeptAnswers(
  store: Store,
  request: RecoverKeptRequest,
  spool: PartSpool | undefined,
): Promise<string[]> {
  const { run, filters } = request;
  if (!spool) return [];
  const published: string[] = [];
  await spool.publish(store, [`${run.name}/`], published);
  const kept = keptAnswersByRun(run, published);
  if (kept.size === 0) return [];
  const last = (await readWatermarkState(store, run.name)).lastRun;
  const indexes = last ? kept.get(last.run_id) : undefined;
  if (!last || !indexes) return [];
  // Believed only when it is one (size, depth, the shipped schema) and that run's, in its place (this push, that run,
  // its own folder); without it (never written, spoiled, planted) the kept answers stay published in that run's
  // folders, and its batches are recorded by a try of that same run.
  const manifest = (await readPlacedManifest(store, last.manifest, PushManifestSchema, pushManifestClaims))?.manifest as
    | PushManifest
    | undefined;
  if (!manifest || manifest.mode === 'backfill' || manifest.name !== run.name || manifest.run_id !== last.run_id) {
    return [];
  }
  const earlier: PushRunRef = { ...run, runId: last.run_id, date: manifest.dt };
  for (const index of indexes) {
    const identity = pushPartIdentity({ run: earlier, index, filters });
    await recordSavedAnswer(
      store,
      earlier,
      index,
      identity,
      await readPart(store, answerKey(earlier, index), identity),
    );
  }
  const rounds: PushRound[] = [];
  for (const round of [1, 2]) {
    const planned = await readJsonIfPresent<PushRound>(store, roundKey(earlier, round));
    if (planned) rounds.push(planned);
  }
  await finalizePushRun(store, {
    run: earlier,
    watchlist: manifest.watchlist,
    status: manifest.status,
    startedAt: manifest.started_at,
    scheduledAt: manifest.scheduled_at,
    rounds,
    ...(manifest.mode === 'full_refresh' ? { fullRefresh: true } : {}),
    ...(manifest.lookback_ms ? { lookbackMs: manifest.lookback_ms } : {}),
    ...(manifest.error ? { error: manifest.error } : {}),
    ...(manifest.details ? { details: manifest.details } : {}),
  });
  return [earlier.runId];
}

/** The answer records among `keys` that belong to runs other than `run`: run id → batch indexes. */
function keptAnswersByRun(run: PushRunRef, keys: readonly string[]): Map<string, number[]> {
  const byRun = new Map<string, number[]>();
  const answer = /^([^/]+)\/work\/run-([^/]+)\/answer-(\d+)\.json$/;
  for (const key of keys) {
    const match = answer.exec(key);
    if (!match || match[1] !== run.name || match[2] === run.runId) continue;
    byRun.set(match[2]!, [...(byRun.get(match[2]!) ?? []), Number(match[3])]);
  }
  return byRun;
}
