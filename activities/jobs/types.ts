/** Shapes that cross the workflow/activity boundary for bulk jobs. All small: references and counts, never rows. */
import type { z } from 'zod';
import type { JobKind } from '../../contract/kinds.ts';
import type { ManifestSchema, Written } from '../../contract/manifest-schemas.ts';
import type {
  BatchResult,
  Compression,
  JobStatus,
  ManifestPart,
  PartCounts,
  VerificationSummary,
} from '../run/types.ts';
import type { OutputFormat } from '../tables/formats.ts';

export type { BatchResult, Compression, JobKind, JobStatus, ManifestPart, PartCounts, VerificationSummary };

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

/** Result of splitting an input into batch files. Recorded in `work/_prepared.json`. */
export interface PreparedInput {
  input: string;
  rows: number;
  distinct: number;
  duplicates: number;
  invalid: number;
  /** Lines that are no records: blank lines, a report's footer (counted, never rows, never paid). */
  skippedLines?: number;
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

/**
 * A job's `_manifest.json`, as the output contract describes it (contract/manifest-schemas.ts). `columns` is
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
  unsavedAnswers?: { credits: number; unknown_calls: number; from_balances?: { calls: number; credits: number } };
  /** A failed job whose output refused its manifest too (a full disk): why. Its figures are the manifest's. */
  manifestRefused?: string;
}
