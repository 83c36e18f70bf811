/**
 * The record a schedule's state keeps of the run that committed it (`last_run` in `_watermarks.json` and in a sync's
 * `_state.json`): what `schedule state` and `describe` show. One type for every kind: the head every kind writes
 * (who the run was and what its manifest says of it) and the facts of its kind, absent where the kind has none.
 * State files of earlier releases hold exactly these fields, so they read as they are.
 */
export interface LastRun {
  run_id: string;
  status: string;
  manifest: string;
  finished_at: string;
  credits: number;
  calls: number;
  /** A push's or a feed's mode (`incremental`, `full-refresh`, or the feed's kind). */
  mode?: string;
  /** Signals a push or a feed delivered. */
  signals?: number;
  overlap_credits?: number;
  /** A push's or a feed's keys it could not complete, how many and (a push) which. */
  incomplete?: number;
  incomplete_domains?: string[];
  /** A sync night's new signals and its records. */
  new_signals?: number;
  records?: { total: number; new: number; changed: number; unchanged: number; gone: number };
}

/** What a push or a feed did besides what its manifest says. */
export type WatermarkRunFacts = Required<Pick<LastRun, 'mode' | 'signals' | 'incomplete'>> &
  Pick<LastRun, 'calls' | 'overlap_credits' | 'incomplete_domains'>;

/** What a sync night did besides what its manifest says. */
export type SyncNightFacts = Required<Pick<LastRun, 'calls' | 'new_signals' | 'records'>>;

/**
 * The record of the run that commits the state: who it was and what its manifest says of it (status, end, credits),
 * with what else it did. A push or a feed with no overlap or no domains to name records zero and none.
 */
export function lastRunOf(
  run: { runId: string },
  manifestKey: string,
  manifest: { status: string; finished_at: string; credits_charged: number },
  did: WatermarkRunFacts | SyncNightFacts,
): LastRun {
  const head = {
    run_id: run.runId,
    status: manifest.status,
    manifest: manifestKey,
    finished_at: manifest.finished_at,
  };
  if ('records' in did) {
    return {
      ...head,
      credits: manifest.credits_charged,
      calls: did.calls,
      new_signals: did.new_signals,
      records: did.records,
    };
  }
  return {
    run_id: head.run_id,
    status: head.status,
    mode: did.mode,
    manifest: head.manifest,
    finished_at: head.finished_at,
    signals: did.signals,
    credits: manifest.credits_charged,
    overlap_credits: did.overlap_credits ?? 0,
    calls: did.calls,
    incomplete: did.incomplete,
    incomplete_domains: did.incomplete_domains ?? [],
  };
}
