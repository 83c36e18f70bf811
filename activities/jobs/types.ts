/** Shapes that cross the workflow/activity boundary for bulk jobs. All small: references and counts, never rows. */
import type { TableName } from '../tables/columns.ts';
import type { OutputFormat } from '../tables/formats.ts';

export type JobKind = 'enrich' | 'verify-emails' | 'intent-export' | 'enrich-contacts';

export type JobStatus = 'running' | 'completed' | 'completed_with_errors' | 'budget_exhausted' | 'failed';

/** Where a job lives: `<output>/<jobId>/…`. */
export interface JobRef {
  jobId: string;
  kind: JobKind;
  /** Base output URL (file://, s3://, gs://). */
  output: string;
  /** `.jsonl.gz` (default) or `.jsonl`. */
  compression?: Compression;
  /** Formats of the flat tables (`--format`), written beside the lines parts; none when absent. */
  formats?: OutputFormat[];
  /** Input columns kept in the output (`--keep-columns`): each is a column of the rows and invalid tables. */
  keepColumns?: string[];
  /**
   * The options that change the job's answers (enrich: filters and `limit`; absent for the other kinds). Parts record
   * their hash, so that a part written under other options is never reused.
   */
  options?: Record<string, unknown>;
}

/** How a part is stored: gzip JSONL (the default) or plain JSONL. */
export type Compression = 'gzip' | 'none';

/** Result of splitting an input into batch files. Recorded in `work/_prepared.json`. */
export interface PreparedInput {
  input: string;
  rows: number;
  distinct: number;
  duplicates: number;
  invalid: number;
  batches: number;
  batchSize: number;
  /** Distinct rows identified without a domain (LinkedIn URL or name), answered by single calls. */
  singles?: number;
  /** Their batches (`work/single-N.jsonl`), of `singleBatchSize` rows each. */
  singleBatches?: number;
  singleBatchSize?: number;
  /** Objects of duplicate rows (`work/dups-…`) to answer at the end. */
  duplicateFiles?: number;
  /** The input columns used, by role (for the manifest and the dry run). */
  columns?: Record<string, unknown>;
}

/**
 * The first batches of an input, written before the rest has been read (`prepareInputStart`): a job runs them while
 * the whole input is prepared. Their files are the same as the whole preparation writes.
 */
export interface PreparedStart {
  complete: false;
  batches: number;
}

/** Counts that a part records in its own metadata, so a finished part can be re-counted without an API call. */
export interface PartCounts {
  lines: number;
  ok: number;
  not_found: number;
  error: number;
  invalid: number;
  credits: number;
  /** Lines whose failure a later call may fix (verify-emails: upstream failures); the part is then marked failed. */
  retryable?: number;
  /** verify-emails only: result counts of the part. */
  summary?: VerificationSummary;
  /** Lines of rows answered by another row's answer (`status: duplicate`). */
  duplicate?: number;
  /** API calls whose answer the part holds (absent in parts written before it was counted: one bulk call). */
  calls?: number;
}

export interface VerificationSummary {
  total: number;
  deliverable: number;
  undeliverable: number;
  risky: number;
  unknown: number;
}

export interface BatchResult {
  index: number;
  /** True when the part already existed and no API call was made. */
  reused: boolean;
  /** True when the batch could not be processed and its lines are error records (a re-run retries it). */
  failed: boolean;
  /** True when the credit budget ran out inside the batch: some items were not sent (a re-run sends them). */
  partial?: boolean;
  counts: PartCounts;
  /** enrich: signals in the lines just written (absent when reused); the worker's metrics count them. */
  signals?: number;
}

export interface ManifestPart {
  key: string;
  lines: number;
  bytes: number;
  sha256: string;
  /** `lines` (the output lines, nested JSON) or a flat table: `rows`, `signals`, `invalid`. */
  table?: 'lines' | TableName;
  format?: OutputFormat;
}

export interface Manifest {
  /** The output contract's version (schemas/manifest.schema.json); raised only by an incompatible change. */
  schema_version: 2;
  job_id: string;
  kind: JobKind;
  input: string | null;
  /** The output URL the job wrote under: every part's `key` is relative to it. */
  output: string;
  status: JobStatus;
  started_at: string;
  finished_at: string;
  counts: {
    input_rows: number;
    distinct: number;
    duplicates: number;
    ok: number;
    not_found: number;
    error: number;
    invalid: number;
    lines: number;
  };
  summary?: VerificationSummary;
  /** Credits the service charged as far as its answers said, including answers paid for and then lost. */
  credits_charged: number;
  /**
   * Answers paid for but not saved (docs/what-holds.md): `credits` reported by the lost answers themselves, and
   * `unknown_calls` whose cost no answer said (a reset, a timeout, a worker that died during the call).
   */
  unsaved_answers?: { credits: number; unknown_calls: number };
  /** API calls whose answers the parts hold: bulk calls, and single calls (rows identified without a domain). */
  calls?: { bulk: number; single: number };
  /** Companies named two ways by different rows and paid for twice, and what the second payments cost. */
  overlap?: { companies: number; credits: number };
  /** The input columns used, by role. */
  columns?: Record<string, unknown>;
  batches: { total: number; done: number; failed: number };
  parts: ManifestPart[];
  /** With `--format csv`: every rows CSV part in one file (`<job>/rows.csv`), the file a CRM imports. */
  rows_csv?: ManifestPart;
  error?: string;
  details?: Record<string, unknown>;
}

export interface FinalizeRequest {
  job: JobRef;
  input: string | null;
  status: JobStatus;
  startedAt: string;
  prepared?: PreparedInput;
  error?: string;
  details?: Record<string, unknown>;
}

/** What a job workflow returns: the manifest's location and its headline numbers. */
export interface JobResult {
  jobId: string;
  kind: JobKind;
  status: JobStatus;
  manifestUrl: string;
  counts: Manifest['counts'];
  credits: number;
  parts: number;
  summary?: VerificationSummary;
  /** Answers paid for but not saved (see Manifest). */
  unsavedAnswers?: { credits: number; unknown_calls: number };
}
