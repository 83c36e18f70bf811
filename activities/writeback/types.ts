/**
 * Shapes that cross the workflow/activity boundary for a night's write-back to the CRM (`schedule create
 * --write-back hubspot|salesforce`). References, names and counts only: the records stay in the bucket, the token in
 * the worker's configuration.
 */
import type { CsvFileWritten } from '../../connectors/crm/csv-file.ts';
import type { CrmName, CrmObject } from '../../connectors/crm/writer.ts';
import type { SyncKind, SyncRunRef } from '../sync/types.ts';

/** `overwrite` (default): the night's value replaces the CRM's. `fill-empty`: only an empty field (or the value the kit wrote last) is written. */
export type WritePolicy = 'overwrite' | 'fill-empty';

/** What a schedule says of its write-back (kept in its workflow's input: no secret). */
export interface WriteBackOptions {
  crm: CrmName;
  /** Rows-table columns to write (`--write-fields`); default `DEFAULT_WRITE_COLUMNS`. */
  fields?: string[];
  /** Per column (`--write-policy signal_count=fill-empty`); the rest `overwrite`. */
  policies?: Record<string, WritePolicy>;
}

export interface WriteBackRequest extends WriteBackOptions {
  run: SyncRunRef;
  kind: SyncKind;
}

/** A night's write-back as `schedule run --wait`, `schedule state` and the night's manifest report it. */
export interface WriteBackResult {
  crm: CrmName;
  object: CrmObject;
  /** Records the CRM confirmed tonight. */
  written: number;
  /** Records the CRM refused; `transient` of them are tried again next night. */
  rejected: number;
  transient: number;
  /** Records not sent (cut short, or no field left to write under `fill-empty`); pending ones go first next night. */
  notAttempted: number;
  /** Of the records tonight, those left pending by an earlier night. */
  carried: number;
  /** Records `fill-empty` left as the CRM had them. */
  kept: number;
  /** Text values cut to the field's length. */
  truncated: number;
  /** Records still pending after tonight. */
  pending: number;
  /** `writeback.csv` beside `changes.csv`. */
  reportUrl: string;
  /** `writeback.csv` as the manifest lists it (absent in the ledgers of nights written before it was listed). */
  report?: CsvFileWritten;
}
