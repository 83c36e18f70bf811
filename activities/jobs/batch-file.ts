import type { Store } from '../../connectors/storage/store.ts';
import { batchKey } from './layout.ts';
import type { JobRef } from './types.ts';

/** One distinct input value of a batch: normalized value, first input row, raw text. */
export interface BatchItem {
  v: string;
  row: number;
  raw: string;
}

export async function readBatch(store: Store, job: JobRef, index: number): Promise<BatchItem[]> {
  const text = await store.readText(batchKey(job, index));
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as BatchItem);
}
