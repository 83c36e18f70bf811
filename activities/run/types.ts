/** Shapes every kind of run shares (jobs, pushes, feeds, syncs): statuses, part counts, batch results. */
import type { z } from 'zod';
import type { ManifestPartSchema, Written } from '../../contract/manifest-schemas.ts';
import type { OutputFormat } from '../tables/formats.ts';

export type JobStatus = 'running' | 'completed' | 'completed_with_errors' | 'budget_exhausted' | 'failed';

/** How a part is stored: gzip JSONL (the default) or plain JSONL. */
export type Compression = 'gzip' | 'none';

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

/** One run of a schedule (a push, a feed): everything lives under `<output>/<name>/`; its files are keyed by `runId`. */
export interface ScheduledRunRef {
  /** The schedule's name: lower-case letters, digits, `-` and `_` (`SCHEDULE_NAME`). */
  name: string;
  /** Base output URL (file://, s3://, gs://). */
  output: string;
  /** `20260301T120000Z`: from the run's scheduled time, so that a retried run writes the same keys. */
  runId: string;
  /** `YYYY-MM-DD` (UTC) of the run's scheduled time: the `dt=` partition. */
  date: string;
  /** Formats of the flat table written beside each part (`--format`); none when absent. */
  formats?: OutputFormat[];
}
