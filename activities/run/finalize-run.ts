import type { z } from 'zod';
import { StorageRefusedError } from '../../connectors/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type ManifestClaims, manifestUrlAt, placeManifest } from '../../contract/manifest-place.ts';
import { writeManifest } from './parts.ts';
import {
  type AnswerWait,
  answerWait,
  countUnsavedAnswers,
  type MarkerFolder,
  type UnsavedAnswers,
} from './unsaved-answers.ts';

/** What a kind of run has read of its own parts or saved answers. */
export interface Gathered {
  /** Per batch (or call) index, the paid calls whose answers it saved: their markers are settled, the rest counted. */
  savedCalls: ReadonlyMap<number, ReadonlySet<string>>;
  /** A run that keeps its own count of answers paid for and not saved (an intent export's record) settles no markers. */
  unsaved?: UnsavedAnswers;
}

/**
 * What one kind of run (job, push, feed, sync) brings to the shared end of a run: each hook is given the store and
 * the kind's finalize request, and what the steps before it produced.
 */
export interface RunEnd<Q extends RunEndRequest, G extends Gathered, W, M, R> {
  /** Where the run's paid-call markers are. */
  markers(request: Q): MarkerFolder;
  /** Where its manifest goes. */
  manifestKey(request: Q): string;
  /** Reads the run's own parts or saved answers and counts them. */
  gather(store: Store, request: Q): Promise<G>;
  /** Writes what the run delivers besides its manifest (parts, tables), before the manifest names them. */
  write(store: Store, request: Q, gathered: G, unsaved: UnsavedAnswers): Promise<W>;
  /** The manifest, with this kind's own fields. */
  manifest(store: Store, request: Q, gathered: G, written: W, unsaved: UnsavedAnswers): M;
  /**
   * The kind's manifest contract (contract/manifest-schemas.ts) and where its ids place it (contract/manifest-place.ts):
   * every manifest the run writes is parsed by the schema and placed where it is written before it is written, so
   * the kit never publishes a manifest its own readers would refuse.
   */
  contract?: { schema: z.ZodType; claims(manifest: M): ManifestClaims };
  /**
   * A failed run (perhaps stopped by a full disk) writes its manifest before the files it delivers besides its parts,
   * so that what it was charged is said while a small file still fits. This writes those files, as many as the output
   * takes, and returns the manifest naming them (the same manifest when none was written).
   */
  writeAfterFailedManifest?(store: Store, request: Q, manifest: M, gathered: G, written: W): Promise<M>;
  /** Once the manifest is published: commits the run's state, cleans up, and says what the run did. */
  afterManifest(store: Store, request: Q, manifest: M, gathered: G, written: W): Promise<R>;
  /**
   * A failed run whose manifest the output refused too (a full disk): what it was charged is still its result, which
   * the command prints; the run that finishes it writes the manifest. Without it, the refusal is thrown.
   */
  resultWithoutManifest?(store: Store, request: Q, manifest: M, refused: StorageRefusedError): R;
}

/** What every kind's finalize request says: how the run ended. */
export interface RunEndRequest {
  status: string;
}

/**
 * The finalize activity of one kind of run: its hooks in the end every run shares (`finalizeRun`). A test may pass
 * its own `wait` for the answers still on their way.
 */
export function runFinalizer<Q extends RunEndRequest, G extends Gathered, W, M, R>(end: RunEnd<Q, G, W, M, R>) {
  return (store: Store, request: Q, wait: AnswerWait = answerWait()): Promise<R> =>
    finalizeRun(store, request, end, wait);
}

/**
 * Ends a run, the same way for every kind: gathers its parts, settles the paid-call markers (waiting for answers
 * still on their way, activities/run/unsaved-answers.ts), writes its tables, then its manifest last (a failed run: its
 * manifest before its other files), and only then lets it commit state and clean up. Each step is idempotent: a crash anywhere is repaired by running it again.
 */
async function finalizeRun<Q extends RunEndRequest, G extends Gathered, W, M, R>(
  store: Store,
  request: Q,
  end: RunEnd<Q, G, W, M, R>,
  wait: AnswerWait,
): Promise<R> {
  const gathered = await end.gather(store, request);
  const markers = end.markers(request);
  const unsaved = gathered.unsaved ?? (await countUnsavedAnswers(store, markers, gathered.savedCalls, wait));
  const written = await end.write(store, request, gathered, unsaved);
  let manifest = end.manifest(store, request, gathered, written, unsaved);
  try {
    await writeManifest(store, end.manifestKey(request), underContract(store, end, request, manifest));
  } catch (error) {
    const stopped = request.status === 'failed' && error instanceof StorageRefusedError;
    if (!stopped || !end.resultWithoutManifest) throw error;
    return end.resultWithoutManifest(store, request, manifest, error);
  }
  if (request.status === 'failed' && end.writeAfterFailedManifest) {
    manifest = await filesAfterFailedManifest(store, request, end, manifest, gathered, written);
  }
  return end.afterManifest(store, request, manifest, gathered, written);
}

/** A failed run's files after its manifest, then the manifest again naming them; refused, the first one stands. */
async function filesAfterFailedManifest<Q extends RunEndRequest, G extends Gathered, W, M, R>(
  store: Store,
  request: Q,
  end: RunEnd<Q, G, W, M, R>,
  manifest: M,
  gathered: G,
  written: W,
): Promise<M> {
  try {
    const named = await end.writeAfterFailedManifest!(store, request, manifest, gathered, written);
    if (named !== manifest)
      await writeManifest(store, end.manifestKey(request), underContract(store, end, request, named));
    return named;
  } catch (error) {
    if (error instanceof StorageRefusedError) return manifest;
    throw error;
  }
}

/** The manifest as its kind's contract reads it, placed where it is about to be written (throws otherwise). */
function underContract<Q extends RunEndRequest, G extends Gathered, W, M, R>(
  store: Store,
  end: RunEnd<Q, G, W, M, R>,
  request: Q,
  manifest: M,
): M {
  if (!end.contract) return manifest;
  end.contract.schema.parse(manifest);
  placeManifest(manifestUrlAt(store.url, end.manifestKey(request)), end.contract.claims(manifest));
  return manifest;
}

/**
 * What every manifest says the run was charged: the credits of the answers it saved, plus those of answers paid for
 * and not saved (an answer the output refused, one another attempt beat to it, a call whose outcome nobody knows).
 */
export function chargedFields(savedCredits: number, unsaved: UnsavedAnswers) {
  return {
    credits_charged: savedCredits + unsaved.credits,
    unsaved_answers: {
      credits: unsaved.credits,
      unknown_calls: unsaved.unknownCalls,
      // Calls whose answer nobody read, their cost from the balances the service reported: exact when nothing else
      // charged the account meanwhile, else at most this (docs/paid-answers.md).
      ...(unsaved.fromBalances
        ? { from_balances: { ...unsaved.fromBalances, exact_unless_account_charged_elsewhere: true as const } }
        : {}),
    },
  };
}

/** How every manifest ends: why the run stopped and what more it said, when it did (absent otherwise). */
export function endingFields(request: { error?: string | undefined; details?: Record<string, unknown> | undefined }) {
  return {
    ...(request.error ? { error: request.error } : {}),
    ...(request.details ? { details: request.details } : {}),
  };
}

/** Whose run a scheduled run's manifest is, and when it ran: the fields a push's, a feed's and a sync's start with. */
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
