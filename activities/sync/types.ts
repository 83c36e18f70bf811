/**
 * Shapes that cross the workflow/activity boundary for the nightly CRM sync (`schedule create --kind enrich`). All
 * small: references and counts; the export's records, the answers and the state live in the bucket.
 */
import type { InputEncoding } from '../input/encoding.ts';
import type { OutputFormat } from '../tables/formats.ts';

/** What a sync's export holds: accounts (`enrich`, bulk calls by domain) or contacts (`enrich-contacts`, a call each). */
export type SyncKind = 'enrich' | 'enrich-contacts';

/** One run of one sync: everything lives under `<output>/<name>/`; the run's files are keyed by `runId`. */
export interface SyncRunRef {
  /** The schedule's name: lower-case letters, digits, `-` and `_`. */
  name: string;
  /** Base output URL (file://, s3://, gs://). */
  output: string;
  /** `20260301T120000Z`: from the run's scheduled time, so that a retried run writes the same keys. */
  runId: string;
  /** `YYYY-MM-DD` (UTC) of the run's scheduled time: the `dt=` partition. */
  date: string;
  /**
   * The run's scheduled time (ISO 8601 UTC). Every company answered by the run is complete through it (or through
   * its newest signal, if later): so the companies of one night share one start the next night and fill whole calls.
   */
  at: string;
  /** Tables written besides `rows.csv` (`--format`): the `rows` table in each format. */
  formats?: OutputFormat[];
}

/** What a run reads of the export, as `enrich` reads it. */
export interface SyncInputOptions {
  /** The one identifier column (`--column`); by default every column whose header names an identifier. */
  column?: string;
  /** The record id column (`--id-column`); by default the one whose header names an id. */
  idColumn?: string;
  /** Columns carried into every row (`--keep-columns`). */
  keepColumns?: string[];
  /** The export's text encoding (`--encoding`); found from the file when absent. */
  encoding?: Exclude<InputEncoding, 'auto'>;
  /** An .xlsx export's sheet (`--sheet`); the first when absent. */
  sheet?: string;
}

/** Filters of every call of a run (spec 4.1 names). */
export interface SyncFilters {
  signal_types?: string[];
  /** Signals per company and call (`--limit`), at most 500. */
  limit: number;
}

export interface PrepareSyncRequest extends SyncInputOptions {
  run: SyncRunRef;
  /** Default `enrich`. */
  kind?: SyncKind;
  /** The CRM export, read afresh each run. */
  input: string;
  /** Companies per bulk call (default and at most 100). */
  batchSize?: number;
}

/** What planning produced: counts only; the batches are files under `work/`. */
export interface SyncPlan {
  rows: number;
  invalid: number;
  /** Distinct companies the export names. */
  companies: number;
  /** Companies the state holds nothing for: they get the full answer. */
  newCompanies: number;
  batches: number;
  /**
   * Batches of records named only by a LinkedIn company URL or a name that the state has not resolved to a company
   * yet: each is asked once, for free (a call that can return no signal), then the run's calls are packed.
   */
  resolveBatches: number;
  /** False until the calls are packed (after the resolutions, when there are any). */
  packed: boolean;
  /** The run whose commit wrote the state this plan started from (null: none yet). */
  stateFrom: string | null;
  /** Why the stored state was ignored and the night priced as a fresh one (never a byte of the state). */
  stateIgnored?: string;
  /** An earlier run that stopped before its commit, whose saved answers were taken into the state first. */
  carriedFrom?: string;
  /** `enrich-contacts` for a contacts sync (absent: accounts). */
  kind?: SyncKind;
  /** The columns chosen in the export (identifiers, the record id's header, the kept ones): the CRM file's names. */
  columns?: Record<string, unknown>;
  /** Lines of the export that are no records (blank lines, a report's footer): never rows, never asked. */
  skippedLines?: number;
}

/** A signal as the state holds it: enough for the rows table's newest-signal columns. */
export interface HeldSignal {
  signal_id: string;
  signal_type: string;
  detected_at: string;
  data?: { summary?: string };
}

/** One company (or contact) of a batch: from where it needs signals. */
export interface SyncBatchCompany {
  /** The company's domain; a contact's key (`email:…`, `linkedin_person:…`). */
  domain: string;
  /** A contact: how it is asked. */
  contact?: { role: 'email' | 'linkedin_person'; send: string };
  /** Complete through this time (null: never answered, the full answer). */
  start: string | null;
}

/** One batch file: one bulk call. */
export interface SyncBatch {
  index: number;
  /** The lowest start of its companies (null: full answers). */
  detected_after: string | null;
  domains: SyncBatchCompany[];
}

/** A record's identifier that is not a domain, to resolve to its company: `linkedin_url:…` or `company_name:…`. */
export interface SyncLookup {
  key: string;
  role: 'linkedin_url' | 'company_name';
  /** The value sent (a canonical LinkedIn URL, a name). */
  send: string;
}

export interface SyncResolveRequest {
  run: SyncRunRef;
  index: number;
}

export interface SyncBatchRequest {
  run: SyncRunRef;
  index: number;
  filters: SyncFilters;
}

/** What one call brought for one company. */
export interface CompanyAnswer {
  status: 'ok' | 'not_found' | 'error';
  company?: { name?: string; domain?: string; linkedin_url?: string };
  /** A contact's person fields as the service gave them. */
  contact?: Record<string, unknown>;
  /** Signals after its start (new to the state), newest first. */
  signals: HeldSignal[];
  error?: { code: string; message: string };
}

/** A batch's saved answer (`work/run-<id>/answer-NNNNN.json`): the receipt a retry trusts. */
export interface SyncAnswer {
  index: number;
  /** The run's scheduled time: the companies it answered are complete through it (`SyncRunRef.at`). */
  as_of: string;
  credits: number;
  calls: number;
  /** Signals returned and paid for but already held (a company asked from below its own start). */
  overlap: { signals: number; credits: number };
  domains: Record<string, CompanyAnswer>;
  paid_calls?: string[];
}

export interface FinalizeSyncRequest {
  run: SyncRunRef;
  input: string;
  kind: SyncKind;
  status: 'completed' | 'completed_with_errors' | 'budget_exhausted' | 'failed';
  startedAt: string;
  scheduledAt: string;
  /** Batches the run planned (answers are looked for in `[0, batches)`). */
  batches: number;
  keepColumns?: string[];
  error?: string;
  details?: Record<string, unknown>;
}

/** What a run returns: where its files are and its headline numbers. */
export interface SyncResult {
  name: string;
  runId: string;
  dt: string;
  status: FinalizeSyncRequest['status'];
  manifestUrl: string;
  rowsUrl: string;
  changesUrl: string;
  /** The ids of the records gone from the export since the last night (`gone.csv`). */
  goneUrl: string;
  records: { total: number; new: number; changed: number; unchanged: number; gone: number };
  credits: number;
  calls: number;
  newSignals: number;
  /** The night's write-back to the CRM (`--write-back`), or why it did not finish (its changes stay pending). */
  writeBack?: WriteBackSummary | { error: string };
}

/** What a night's result says of its write-back (activities/writeback/types.ts `WriteBackResult` has it all). */
export interface WriteBackSummary {
  crm: string;
  object: string;
  written: number;
  rejected: number;
  notAttempted: number;
  pending: number;
  reportUrl: string;
}

/** One record of the night's export as the run keeps it (`work/run-<id>/records.jsonl.gz`), in input order. */
export interface SyncRecord {
  row: number;
  id?: string;
  cols?: Record<string, string>;
  /** The identifier's value as the file had it. */
  raw?: unknown;
  /** The company's domain (rows by domain or website). */
  domain?: string;
  matched_by?: string;
  /** Why the row has no usable identifier, or why it cannot be answered. */
  error?: { code: string; message: string };
  /**
   * A row named only by a LinkedIn company URL or a name: what resolves it to its company (the state's resolutions,
   * then the night's).
   */
  lookup?: SyncLookup;
  /** A contact (contacts syncs): how it is asked; `domain` is then its key. */
  contact?: SyncBatchCompany['contact'];
}
