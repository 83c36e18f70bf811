/**
 * Shapes that cross the workflow/activity boundary for scheduled pushes. All small: references and counts, never
 * domains or signals (those live in the bucket).
 */
import type { JobStatus, ManifestPart, PartCounts } from '../jobs/types.ts';

/** One run of one push: everything lives under `<output>/<name>/`; the run's files are keyed by `runId`. */
export interface PushRunRef {
  /** The push's name (also the schedule's): lower-case letters, digits, `-` and `_`. */
  name: string;
  /** Base output URL (file://, s3://, gs://). */
  output: string;
  /** `20260301T120000Z`: from the run's scheduled time, so that a retried run writes the same keys. */
  runId: string;
  /** `YYYY-MM-DD` (UTC) of the run's scheduled time: the `dt=` partition. */
  date: string;
}

/** Filters sent with every bulk call of a push (spec 4.1 field names). */
export interface PushFilters {
  signal_types?: string[];
  signal_subtypes?: string[];
  /** Signals per domain and call, at most 500. A domain that returns this many may have more (counted `truncated`). */
  limit: number;
}

export interface PreparePushRequest {
  run: PushRunRef;
  /** Watchlist URL: CSV with a header row or JSONL (optionally .gz). */
  watchlist: string;
  /** CSV column or JSONL field of the domain; `domain`, `website`, `url`, `company_domain` are tried otherwise. */
  column?: string;
  /** ISO 8601: the watermark of a domain seen for the first time (default: none, its whole visible history). */
  since?: string;
  /** Domains per bulk call (default and at most 100). */
  batchSize?: number;
}

/** What planning a run produced: counts only; the batches themselves are files under `work/`. */
export interface PushPlan {
  rows: number;
  distinct: number;
  duplicates: number;
  invalid: number;
  /** Bulk calls of this run. */
  batches: number;
  /** Distinct `detected_after` values among the batches. */
  groups: number;
  /** The run whose commit wrote the watermarks this plan started from (null: none yet). */
  watermarksFrom: string | null;
}

/** One batch file: domains that share a watermark, hence one `detected_after`. */
export interface PushBatch {
  index: number;
  /** ISO 8601 UTC; null for domains without a watermark (their whole visible history). */
  detected_after: string | null;
  domains: string[];
}

export interface PushBatchRequest {
  run: PushRunRef;
  index: number;
  filters: PushFilters;
}

/**
 * What a finished batch recorded (`work/run-<id>/done-NNNNN.json`), written after its part: counts, the newest
 * `detected_at` per domain (the watermark candidates), the domains that hit the limit, and per-domain errors.
 */
export interface PushBatchRecord {
  index: number;
  detected_after: string | null;
  counts: PartCounts;
  /** The part holding the batch's signals; absent when it found none. */
  part?: ManifestPart;
  /** domain → newest `detected_at` among the signals written. */
  marks: Record<string, string>;
  /** Domains that returned `limit` signals: older new signals may exist that this run did not fetch. */
  truncated: string[];
  errors: { domain: string; code: string; message: string }[];
  /** True when the batch could not be fetched: its domains keep their watermarks and a later run retries them. */
  failed: boolean;
}

export interface FinalizePushRequest {
  run: PushRunRef;
  watchlist: string;
  status: JobStatus;
  startedAt: string;
  /** The scheduled time the run id and date come from. */
  scheduledAt: string;
  error?: string;
  details?: Record<string, unknown>;
}

export interface PushManifest {
  name: string;
  run_id: string;
  dt: string;
  scheduled_at: string;
  started_at: string;
  finished_at: string;
  status: JobStatus;
  watchlist: string;
  counts: {
    input_rows: number;
    distinct: number;
    duplicates: number;
    invalid: number;
    /** Domains whose batch ran: ok + not_found + error. */
    domains: number;
    ok: number;
    not_found: number;
    error: number;
    /** Lines written: one per new signal. */
    signals: number;
    /** Domains with possibly more new signals than `limit` (see PushBatchRecord.truncated). */
    truncated: number;
  };
  credits_charged: number;
  batches: { total: number; done: number; failed: number };
  parts: ManifestPart[];
  /** Up to 100 of the domains counted in `counts.truncated`. */
  truncated_domains: string[];
  /** Up to 100 per-domain errors (their count is `counts.error`). */
  errors: PushBatchRecord['errors'];
  /** Up to 100 watchlist rows that hold no usable domain (their count is `counts.invalid`). */
  invalid_rows: { row: number; raw: unknown; error: string }[];
  watermarks: { key: string; from_run: string | null; domains_advanced: number };
  error?: string;
  details?: Record<string, unknown>;
}

/** What a push run returns: where its manifest is and its headline numbers. */
export interface PushResult {
  name: string;
  runId: string;
  dt: string;
  status: JobStatus;
  manifestUrl: string;
  signals: number;
  credits: number;
  parts: number;
  domains: number;
  errors: number;
  watermarksAdvanced: number;
}
