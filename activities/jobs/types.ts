/** Shapes that cross the workflow/activity boundary for bulk jobs. All small: references and counts, never rows. */
import type { z } from 'zod';
import type { OutputFormat } from '../tables/formats.ts';
import type { ManifestPartSchema, ManifestSchema, Written } from './output-schemas.ts';

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

export type ManifestPart = Written<z.output<typeof ManifestPartSchema>>;

/**
 * A job's `_manifest.json`, as the output contract describes it (activities/jobs/output-schemas.ts). `columns` is
 * the column choice as connectors/normalize/columns.ts describes it, one entry per role it knows: the schema names
 * the company roles and `email` but not `linkedin_person` (enrich-contacts), which its loose object lets through.
 */
export type Manifest = Omit<Written<z.output<typeof ManifestSchema>>, 'columns'> & {
  columns?: Record<string, unknown>;
};

export interface FinalizeRequest {
  job: JobRef;
  input: string | null;
  /** How the job ended: never `running`, which no manifest may say. */
  status: Manifest['status'];
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
