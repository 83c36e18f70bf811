import { Context } from '@temporalio/activity';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { readPart, readPartLines } from '../run/parts.ts';
import { readBatch } from './batch-file.ts';
import { foldDoneKey, foldKey, partKey, singlePartKey } from './layout.ts';
import { jobPartIdentity } from './part-identity.ts';
import type { JobRef, PreparedInput } from './types.ts';

/** The answer a row shares with the line that holds it (what a `duplicate` line carries of it). */
export interface SharedAnswer {
  /** The answering line's `row`. */
  row: number;
  status: string;
  domain?: string | null;
  company?: unknown;
  /** The person of a contact's answer. */
  contact?: unknown;
  signal_summary?: unknown;
}

/** A company named two ways and paid for twice in one job: how many, and what the second payments cost. */
export interface Overlap {
  companies: number;
  credits: number;
}

export interface FoldRecord {
  /** Bulk batches given a fold file. */
  batches: number;
  /** Rows with a domain that single calls had answered already (they become duplicates, not sent). */
  folded: number;
  overlap: Overlap;
}

/**
 * Once every single call is answered: the domains they resolved are folded into the bulk batches, so that a company
 * named by one row and reached by another's website is paid for once. Each bulk batch holding such a domain gets
 * `work/fold-N.json` (domain → the single line's answer); its rows are then answered from there (`duplicate`) and not
 * sent. What could not be avoided is counted as overlap: two names (or a name and a LinkedIn URL) that resolved to
 * one company were each paid in full, and a bulk batch that ran before the whole input was read may have paid for a
 * domain a single call also paid for.
 *
 * Memory holds the resolved domains (one entry per distinct row identified without a domain), not the input.
 * Idempotent: `work/_folded.json` is written last and returned as is on a re-run.
 */
export async function foldResolved(
  store: Store,
  request: { job: JobRef; prepared: PreparedInput },
): Promise<FoldRecord> {
  const { job, prepared } = request;
  const done = await readJsonIfPresent<FoldRecord>(store, foldDoneKey(job));
  if (done) return done;
  const heartbeat = () => Context.current().heartbeat();
  const resolved = new Map<string, SharedAnswer & { signals: number }>();
  const overlap: Overlap = { companies: 0, credits: 0 };
  for (let index = 0; index < (prepared.singleBatches ?? 0); index++) {
    heartbeat();
    const key = singlePartKey(job, index);
    if (!(await readPart(store, key, jobPartIdentity(job, index, 'single'))).part) continue;
    for (const line of await readPartLines(store, key)) {
      const domain = line['domain'];
      if (line['status'] !== 'ok' || typeof domain !== 'string' || domain === '') continue;
      const signals = Array.isArray(line['signals']) ? line['signals'].length : 0;
      if (resolved.has(domain)) {
        overlap.companies += 1;
        overlap.credits += 2 * signals;
        continue;
      }
      resolved.set(domain, {
        row: Number(line['row']),
        status: 'ok',
        domain,
        company: line['company'],
        signal_summary: line['signal_summary'],
        signals,
      });
    }
  }
  let batches = 0;
  let folded = 0;
  if (resolved.size > 0) {
    for (let index = 0; index < prepared.batches; index++) {
      heartbeat();
      const hits: Record<string, SharedAnswer> = {};
      let count = 0;
      for (const item of await readBatch(store, job, index)) {
        const answer = resolved.get(item.v);
        if (!answer) continue;
        const { signals: _signals, ...shared } = answer;
        hits[item.v] = shared;
        count += 1;
      }
      if (count === 0) continue;
      const part = (await readPart(store, partKey(job, index), jobPartIdentity(job, index))).part;
      if (part && !part.failed && !part.partial) {
        // Answered before the names were known (the job's first window runs while the input is read).
        overlap.companies += count;
        for (const domain of Object.keys(hits)) overlap.credits += 2 * (resolved.get(domain)?.signals ?? 0);
        continue;
      }
      await store.writeText(foldKey(job, index), JSON.stringify(hits));
      batches += 1;
      folded += count;
    }
  }
  const record: FoldRecord = { batches, folded, overlap };
  await store.writeText(foldDoneKey(job), JSON.stringify(record));
  return record;
}

/** The fold of bulk batch `index`: domain → the single line that answered it (empty when none). */
export async function readFold(store: Store, job: JobRef, index: number): Promise<Map<string, SharedAnswer>> {
  const fold = await readJsonIfPresent<Record<string, SharedAnswer>>(store, foldKey(job, index));
  return new Map(Object.entries(fold ?? {}));
}
