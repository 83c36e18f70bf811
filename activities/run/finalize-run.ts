import type { Store } from '../../connectors/storage/store.ts';
import {
  type AnswerWait,
  countUnsavedAnswers,
  type MarkerFolder,
  type UnsavedAnswers,
} from '../paid/unsaved-answers.ts';
import { writeManifest } from './parts.ts';

/** What a kind of run has read of its own parts or saved answers. */
export interface Gathered {
  /** Per batch (or call) index, the paid calls whose answers it saved: their markers are settled, the rest counted. */
  savedCalls: ReadonlyMap<number, ReadonlySet<string>>;
  /** A run that keeps its own count of answers paid for and not saved (an intent export's record) settles no markers. */
  unsaved?: UnsavedAnswers;
}

/** What one kind of run (job, push, feed, sync) brings to the shared end of a run. */
export interface FinalizeHooks<G extends Gathered, W, M, R> {
  /** Where the run's paid-call markers are. */
  markers: MarkerFolder;
  /** Where its manifest goes. */
  manifestKey: string;
  /** Reads the run's own parts or saved answers and counts them. */
  gather(): Promise<G>;
  /** Writes what the run delivers besides its manifest (parts, tables), before the manifest names them. */
  write(gathered: G, unsaved: UnsavedAnswers): Promise<W>;
  /** The manifest, with this kind's own fields. */
  manifest(gathered: G, written: W, unsaved: UnsavedAnswers): M;
  /** Once the manifest is published: commits the run's state, cleans up, and says what the run did. */
  afterManifest(manifest: M, gathered: G, written: W, unsaved: UnsavedAnswers): Promise<R>;
  /** A manifest the output refused: the run's result all the same (a job stopped by a full disk), else rethrown. */
  manifestRefused?(error: unknown, manifest: M): R | undefined;
}

/**
 * Ends a run, the same way for every kind: gathers its parts, settles the paid-call markers (waiting for answers
 * still on their way, activities/paid/unsaved-answers.ts), writes its tables, then its manifest last, and only then
 * lets it commit state and clean up. Each step is idempotent: a crash anywhere is repaired by running it again.
 */
export async function finalizeRun<G extends Gathered, W, M, R>(
  store: Store,
  hooks: FinalizeHooks<G, W, M, R>,
  wait: AnswerWait,
): Promise<R> {
  const gathered = await hooks.gather();
  const unsaved = gathered.unsaved ?? (await countUnsavedAnswers(store, hooks.markers, gathered.savedCalls, wait));
  const written = await hooks.write(gathered, unsaved);
  const manifest = hooks.manifest(gathered, written, unsaved);
  try {
    await writeManifest(store, hooks.manifestKey, manifest);
  } catch (error) {
    const result = hooks.manifestRefused?.(error, manifest);
    if (result === undefined) throw error;
    return result;
  }
  return hooks.afterManifest(manifest, gathered, written, unsaved);
}

/** Whose run a scheduled run's manifest is, and when it ran: the fields a push's and a sync's manifest start with. */
export function scheduledRunHead<S extends string>(
  run: { name: string; runId: string; date: string },
  request: { scheduledAt: string; startedAt: string },
  status: S,
) {
  return {
    name: run.name,
    run_id: run.runId,
    dt: run.date,
    scheduled_at: request.scheduledAt,
    started_at: request.startedAt,
    finished_at: new Date().toISOString(),
    status,
  };
}
