/**
 * A night of a few hundred records: sObject Collections update (`PATCH /composite/sobjects`), 200 records a call,
 * `allOrNone: false` so that each record stands alone: a deleted one or a validation rule refuses that record only.
 */
import type { CrmObject, CrmRecordUpdate, CrmWriteOutcome } from '../writer.ts';
import { collectionOutcomes } from './outcomes.ts';
import { type Pacer, paced } from './pacing.ts';

/** sObject Collections' limit on records per call. */
export const COLLECTION_SIZE = 200;

export async function writeByCollections(
  pacer: Pacer,
  object: CrmObject,
  updates: CrmRecordUpdate[],
): Promise<CrmWriteOutcome[]> {
  const outcomes: CrmWriteOutcome[] = [];
  for (let start = 0; start < updates.length; start += COLLECTION_SIZE) {
    const chunk = updates.slice(start, start + COLLECTION_SIZE);
    const records = chunk.map((u) => ({ ...u.values, Id: u.id }));
    const what = `sObject Collections update of ${object} (records ${start + 1}-${start + chunk.length})`;
    const results = await paced(pacer, what, () => pacer.conn.sobject(object).update(records, { allOrNone: false }));
    outcomes.push(...collectionOutcomes(chunk, results as unknown as Parameters<typeof collectionOutcomes>[1]));
  }
  return outcomes;
}
