/**
 * Shapes that cross the workflow/activity boundary for scheduled pushes. All small: references and counts, never
 * domains or signals (those live in the bucket).
 */
import type { z } from 'zod';
import type { PushManifestSchema, Written } from '../../contract/manifest-schemas.ts';
import type { JobStatus, ManifestPart, PartCounts, ScheduledRunRef } from '../run/types.ts';
import type { DeliveredId, KeyOutcome } from '../state/watermarks.ts';

/** One run of one push: its signals go under `<output>/<name>/signals/` (activities/push/layout.ts). */
export type PushRunRef = ScheduledRunRef;

/** Filters sent with every bulk call of a push (spec 4.1 field names). */
export interface PushFilters {
  signal_types?: string[];
  signal_subtypes?: string[];
  /**
   * Signals per domain in a run's first call, at most 500. A domain that returns this many is asked again in a
   * catch-up call with the spec's maximum, so a small limit never loses signals (it costs a reported overlap).
   */
  limit: number;
}

/** A past window `[from, to)` fetched by a backfill run (ISO 8601 UTC). */
export interface PushWindow {
  from: string;
  to: string;
}

/** How a run decides where each domain starts. */
export interface PushMode {
  /** Backfill: every domain asks from `window.from` and keeps what is before `window.to`; state is not touched. */
  window?: PushWindow;
  /** Ignore the stored watermarks (each domain starts from `since`), then replace them. */
  fullRefresh?: boolean;
  /** Ask this far before each watermark again, for signals the service shows late; re-pushes none (ids kept). */
  lookbackMs?: number;
}

export interface PreparePushRequest extends PushMode {
  run: PushRunRef;
  /** Watchlist URL: CSV with a header row or JSONL (optionally .gz). */
  watchlist: string;
  /** CSV column or JSONL field of the domain; `domain`, `website`, `url`, `company_domain` are tried otherwise. */
  column?: string;
  /** ISO 8601: where a domain seen for the first time starts (default: none, its whole visible history). */
  since?: string;
  /** Domains per bulk call (default and at most 100). */
  batchSize?: number;
  /** Signals per domain in this round's calls. */
  limit: number;
}

/** What planning a run produced: counts only; the batches themselves are files under `work/`. */
export interface PushPlan {
  rows: number;
  distinct: number;
  duplicates: number;
  invalid: number;
  /** Bulk calls of the run's first round. */
  batches: number;
  /** Distinct watermarks among the domains (before packing). */
  groups: number;
  /** Domains asked from below their own watermark (they share a call with an older one): the overlap's source. */
  mixed: number;
  /** The run whose commit wrote the watermarks this plan started from (null: none yet). */
  watermarksFrom: string | null;
}

/**
 * Batches of a catch-up round: indexes `[first, first + count)`. Round 1 (`limit`) asks the domains that filled a
 * small first-call limit again with 500; round 2 (`narrow`) asks the domains that still had more than 500 new
 * signals once per signal type they have, which reaches the older ones the newest-first answer left out.
 */
export interface PushRound {
  round: number;
  kind: 'limit' | 'narrow';
  first: number;
  count: number;
  /** Domains asked again. */
  domains: number;
}

/** One domain of a batch: from where it needs signals, and signals it must not push again. */
export interface PushBatchDomain {
  domain: string;
  /** It needs the signals after this time (null: its whole visible history). */
  start: string | null;
  /** Its watermark before this run (null: none). */
  through: string | null;
  /** Pushed signals this call may return again (above `through`, or inside the lookback window). */
  pushed?: DeliveredId[];
  /** Lookback: every signal pushed after this time is among `pushed`, so a start this low pushes nothing twice. */
  cover?: string;
  /**
   * Catch-up only: the watermark of the first-round call that left it behind. Answered in full, it takes that one
   * (it is complete through a later instant, so also through this), and the next run finds it in its group again.
   */
  rejoin?: string | null;
}

/** One batch file: one bulk call. `detected_after` is the lowest start of its domains. */
export interface PushBatch {
  index: number;
  round: number;
  /** ISO 8601 UTC; null when a domain in it has never been fetched (its whole visible history). */
  detected_after: string | null;
  /** Backfill: signals at or after this time are not kept. */
  before?: string;
  limit: number;
  /** Round 2: the one signal type this call asks for (instead of the push's type filter). */
  signal_types?: string[];
  /** Pushed signals this far below a new watermark are remembered (the lookback window). */
  lookback_ms?: number;
  domains: PushBatchDomain[];
}

export interface PushBatchRequest {
  run: PushRunRef;
  index: number;
  filters: PushFilters;
}

/**
 * What one call established for one domain (only domains the service answered `ok` or `not_found`): what the state
 * keeps of it (activities/state/watermarks.ts), and whether a catch-up round must ask it again.
 */
export interface DomainOutcome extends KeyOutcome {
  /** More signals exist after `through` than this call returned: a catch-up round asks again. */
  behind?: boolean;
  /** Cut at 500 in a call not yet narrowed: the types to ask one by one, and every signal pushed so far. */
  narrow?: { types: string[]; received: DeliveredId[] };
  /**
   * Signals left out because more than 500 newer ones exist (answers are newest first): counted, not fetched, unless
   * a call per type (`narrow`) reaches them (0 when the
   * service did not say how many).
   */
  missing?: number;
}

/**
 * What a finished batch recorded (`work/run-<id>/done-NNNNN.json`): counts, what each domain is now complete
 * through, the overlap paid for, and per-domain errors.
 */
export interface PushBatchRecord {
  index: number;
  round: number;
  detected_after: string | null;
  /** The newest signal of the answer (any domain): a time the service had reached when it answered. */
  answered_at: string | null;
  counts: PartCounts;
  /** Bulk calls this batch made (0 when its answer was found saved). */
  calls: number;
  /** Signals returned and paid for but not written (already pushed, or outside a backfill's window). */
  overlap: { signals: number; credits: number };
  /** The part holding the batch's signals; absent when it found none. */
  part?: ManifestPart;
  /** The flat signals table's parts of the batch, one per requested format. */
  tables?: ManifestPart[];
  /** domain → what this call established. Domains with an error keep their previous state. */
  domains: Record<string, DomainOutcome>;
  errors: { domain: string; code: string; message: string }[];
  /** True when the batch could not be fetched: its domains keep their watermarks and a later run retries them. */
  failed: boolean;
  /** The paid calls whose answer this record holds: their markers are settled when the run is finalized. */
  paid_calls?: string[];
}

export interface FinalizePushRequest extends PushMode {
  run: PushRunRef;
  watchlist: string;
  /** How the run ended: never `running`, which no manifest may say. */
  status: PushManifest['status'];
  startedAt: string;
  /** The scheduled time the run id and date come from. */
  scheduledAt: string;
  /** Catch-up rounds that ran after the first. */
  rounds: PushRound[];
  error?: string;
  details?: Record<string, unknown>;
}

export interface IncompleteDomain {
  domain: string;
  /**
   * `behind`: its catch-up call did not run (budget, failure); the next run continues from where it stood.
   * `unreachable`: over 500 new signals of one type after its watermark; the older ones are left out (`missing`).
   */
  reason: 'behind' | 'unreachable';
  /** Signals known to be left out, when the service said how many. */
  missing?: number;
}

/** A push run's `_manifest.json`, as the output contract describes it (contract/manifest-schemas.ts). */
export type PushManifest = Written<z.output<typeof PushManifestSchema>>;

/** What a push run returns: where its manifest is and its headline numbers. */
export interface PushResult {
  name: string;
  runId: string;
  dt: string;
  status: JobStatus;
  manifestUrl: string;
  signals: number;
  credits: number;
  overlapCredits: number;
  calls: number;
  parts: number;
  domains: number;
  errors: number;
  incomplete: number;
  /** Up to 20 incomplete domains, named. */
  incompleteDomains: string[];
  watermarksAdvanced: number;
}
