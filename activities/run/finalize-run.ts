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
}

/** What one kind of run (push, feed, sync) brings to the shared end of a run. */
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
  const unsaved = await countUnsavedAnswers(store, hooks.markers, gathered.savedCalls, wait);
  const written = await hooks.write(gathered, unsaved);
  const manifest = hooks.manifest(gathered, written, unsaved);
  await writeManifest(store, hooks.manifestKey, manifest);
  return hooks.afterManifest(manifest, gathered, written, unsaved);
}
