import { type CsvFileWritten, writeCsvFile } from '../../connectors/crm/csv-file.ts';
import type { CrmWriteOutcome } from '../../connectors/crm/writer.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { syncRunPrefix } from '../sync/layout.ts';
import type { SyncRunRef } from '../sync/types.ts';
import { csvHeader, neutralize } from '../tables/encode.ts';

/** `writeback.csv`, beside the night's `changes.csv`. */
export const writeBackReportKey = (run: SyncRunRef) => `${syncRunPrefix(run)}writeback.csv`;

/**
 * One line per record the night had to write: its id under the export's header, its outcome (`written`, `rejected`,
 * `not_attempted`), the CRM's code and message for a refusal (or why it was not attempted) and whether it is tried
 * again next night. Returns its URL and the file as a manifest lists it.
 */
export async function writeWriteBackReport(
  store: Store,
  run: SyncRunRef,
  idHeader: string,
  outcomes: readonly CrmWriteOutcome[],
): Promise<{ url: string; file: CsvFileWritten }> {
  const key = writeBackReportKey(run);
  const header = csvHeader([idHeader || 'record_id', 'outcome', 'crm_code', 'crm_message', 'retried']);
  const lines = [...outcomes].sort(byId).map((o) => csvHeader(cellsOf(o)));
  const file = await writeCsvFile(store, key, header, lines);
  return { url: store.urlOf(key), file };
}

function cellsOf(o: CrmWriteOutcome): string[] {
  if (o.outcome === 'written') return [o.id, 'written', '', '', ''];
  if (o.outcome === 'rejected') {
    const retried = o.transient ? 'next night' : 'when the record changes';
    return [o.id, 'rejected', neutralize(o.code), neutralize(o.message), retried];
  }
  return [o.id, 'not_attempted', '', o.reason, o.reason.startsWith('fill-empty') ? '' : 'next night'];
}

const byId = (a: CrmWriteOutcome, b: CrmWriteOutcome) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
