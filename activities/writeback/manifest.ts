import type { z } from 'zod';
import type { CsvFileWritten } from '../../connectors/crm/csv-file.ts';
import type { CrmName } from '../../connectors/crm/writer.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { manifestUrlAt, placeManifest } from '../../contract/manifest-place.ts';
import { readCheckedManifest } from '../../contract/manifest-read.ts';
import { SyncManifestSchema, type Written } from '../../contract/manifest-schemas.ts';
import { syncManifestClaims, syncManifestKey } from '../sync/layout.ts';
import type { SyncRunRef } from '../sync/types.ts';
import type { WriteBackResult } from './types.ts';

type WriteBackSection = NonNullable<Written<z.output<typeof SyncManifestSchema>>['write_back']>;

/** The manifest's `write_back` section of a night whose write-back is done. */
export function doneSection(result: WriteBackResult): WriteBackSection {
  return {
    crm: result.crm,
    object: result.object,
    status: 'done',
    written: result.written,
    rejected: result.rejected,
    transient: result.transient,
    not_attempted: result.notAttempted,
    carried: result.carried,
    kept: result.kept,
    truncated: result.truncated,
    pending: result.pending,
    ...(result.report ? { report: reportPart(result.report) } : {}),
  };
}

const reportPart = (file: CsvFileWritten) => ({
  key: file.key,
  lines: file.lines,
  bytes: file.bytes,
  sha256: file.sha256,
  format: 'csv' as const,
});

/** The section of a night whose write-back failed (this attempt): why, and what stays pending when the ledger says. */
export function failedSection(crm: CrmName, error: unknown, pending: number | undefined): WriteBackSection {
  return {
    crm,
    status: 'failed',
    error: error instanceof Error ? error.message : String(error),
    ...(pending === undefined ? {} : { pending }),
  };
}

/**
 * Adds the write-back's section to the night's manifest (written by the night's finalize before the write-back
 * began), under the same contract: parsed by the schema and placed where it is written. A night without a manifest
 * the kit can believe is left as it is: the write-back's result is still in `writeback.csv` and the ledger.
 */
export async function recordWriteBackInManifest(
  store: Store,
  run: SyncRunRef,
  section: WriteBackSection,
): Promise<boolean> {
  const key = syncManifestKey(run);
  const read = await readCheckedManifest(store, key, SyncManifestSchema);
  if (read?.manifest === undefined) return false;
  const manifest = SyncManifestSchema.parse({ ...read.manifest, write_back: section });
  placeManifest(manifestUrlAt(store.url, key), syncManifestClaims(manifest));
  await store.writeText(key, `${JSON.stringify(manifest, null, 2)}\n`, { contentType: 'application/json' });
  return true;
}
