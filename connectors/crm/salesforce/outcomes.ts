/** Salesforce's answers, one per update, as the write-back's outcomes. */
import type { CrmRecordUpdate, CrmWriteOutcome } from '../writer.ts';
import { isTransientRecordCode } from './classify.ts';

export function rejected(id: string, code: string, message: string): CrmWriteOutcome {
  return { id, outcome: 'rejected', code, message, transient: isTransientRecordCode(code) };
}

interface SaveResultLike {
  success: boolean;
  errors?: { statusCode?: string; errorCode?: string; message?: string }[];
}

/** sObject Collections answers one SaveResult per record, in the order sent. */
export function collectionOutcomes(updates: CrmRecordUpdate[], results: SaveResultLike[]): CrmWriteOutcome[] {
  return updates.map((update, i) => {
    const result = results[i];
    if (!result)
      return { id: update.id, outcome: 'not_attempted', reason: 'no result from Salesforce for this record' };
    if (result.success) return { id: update.id, outcome: 'written' };
    const error = result.errors?.[0];
    return rejected(update.id, error?.statusCode ?? error?.errorCode ?? 'UNKNOWN', error?.message ?? '');
  });
}

/** `ENTITY_IS_DELETED:entity is deleted:--` → its code and message (the last part names the fields, `--` none). */
export function parseBulkError(text: string): { code: string; message: string } {
  const colon = text.indexOf(':');
  if (colon < 0) return { code: text || 'UNKNOWN', message: '' };
  const rest = text.slice(colon + 1);
  const last = rest.lastIndexOf(':');
  return { code: text.slice(0, colon), message: last < 0 ? rest : rest.slice(0, last) };
}

export interface IngestResults {
  successfulResults: Record<string, string>[];
  failedResults: Record<string, string>[];
  unprocessedRecords: Record<string, string>[] | string;
}

/**
 * An ingest job's three result files, matched to the updates by the `Id` column as uploaded. An update in none of
 * them was not attempted (a job that failed or was aborted before its row).
 */
export function ingestOutcomes(updates: CrmRecordUpdate[], results: IngestResults, why: string): CrmWriteOutcome[] {
  const byId = new Map<string, CrmWriteOutcome>();
  for (const row of results.successfulResults) {
    const id = row['Id'] ?? row['sf__Id'] ?? '';
    byId.set(id, { id, outcome: 'written' });
  }
  for (const row of results.failedResults) {
    const id = row['Id'] ?? row['sf__Id'] ?? '';
    const { code, message } = parseBulkError(row['sf__Error'] ?? '');
    byId.set(id, rejected(id, code, message));
  }
  return updates.map((update) => byId.get(update.id) ?? { id: update.id, outcome: 'not_attempted', reason: why });
}
