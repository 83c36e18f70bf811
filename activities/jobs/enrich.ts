import { KitError } from '../../connectors/errors.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../../connectors/signal-api/limits.ts';
import type { BulkEnrichItem, EnrichCompaniesParams } from '../../connectors/signal-api/types.ts';
import { reusedResult } from '../paid/paid-batch.ts';
import { lostRace, type PaidAnswer, publishPaidLines, sendPaidCall } from '../paid/paid-call.ts';
import { type PaidLines, readPaidLines } from '../paid/paid-lines.ts';
import { type EncodedTablePart, encodePart, zeroCounts } from '../run/parts.ts';
import { type BatchItem, readBatch, recordFields } from './batch-file.ts';
import { duplicateLine } from './duplicates.ts';
import { readFold, type SharedAnswer } from './fold.ts';
import { partKey } from './layout.ts';
import { paidBatchActivity } from './paid-batch.ts';
import { encodeJobTables } from './tables.ts';
import type { JobRef, PartCounts } from './types.ts';

/**
 * Filters applied to every domain of a job: the bulk call's parameters without its domains. `detected_after` is an
 * ISO 8601 string, not any date the client accepts, because these options travel in workflow arguments (JSON).
 */
export type EnrichOptions = Omit<EnrichCompaniesParams, 'domains' | 'detected_after'> & { detected_after?: string };

export interface EnrichBatchRequest {
  job: JobRef;
  index: number;
  options: EnrichOptions;
  /**
   * When set, the part's credits may not go over this: only as many domains as fit at their worst (`limit` × 2
   * credits each) are sent, and the part is published `partial` if some are left for a later call.
   */
  creditCap?: number;
  /** True once single calls have resolved domains (`foldResolved`): rows they answered are not sent again. */
  fold?: boolean;
}

/** The most credits one domain can cost under these options (spec section 8: 2 per signal, `limit` per domain). */
export function worstCaseCreditsPerDomain(options: EnrichOptions): number {
  return (options.limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
}

/**
 * Enriches batch `index` with one bulk call and publishes `parts/part-<index>`: one line per distinct domain.
 * A part that already exists is returned from its recorded counts without calling the API; a failed or partial
 * one keeps its paid-for lines and sends only the other domains.
 */
export const enrichBatch = paidBatchActivity<EnrichBatchRequest>(
  ({ job, index }) => partKey(job, index),
  async (client, store, request, { key, identity, found }, attempt) => {
    const { job, index, options } = request;
    const existing = found.part;

    const items = await readBatch(store, job, index);
    const paid = await readPaidLines(store, key, existing, 'domain');
    const folded = request.fold ? await readFold(store, job, index) : new Map<string, SharedAnswer>();
    const pending = items.filter((item) => !paid.values.has(item.v) && !folded.has(item.v));
    const fit =
      request.creditCap === undefined
        ? pending.length
        : Math.floor((request.creditCap - paid.credits) / worstCaseCreditsPerDomain(options));
    const send = pending.slice(0, Math.max(0, fit));
    if (send.length === 0 && pending.length > 0) {
      // Not even one domain fits what is left of the budget: nothing is sent.
      return { index, reused: true, failed: false, partial: true, counts: existing?.counts ?? zeroCounts() };
    }

    let results: BulkEnrichItem[] = [];
    let credits = 0;
    let answered: PaidAnswer | undefined;
    if (send.length > 0) {
      try {
        const { response, marker } = await sendPaidCall(store, job, index, attempt, (call) =>
          client.enrichCompanies({ domains: send.map((item) => item.v), ...options }, call),
        );
        results = response.results;
        credits = response.credits;
        answered = { marker, credits };
      } catch (error) {
        // A refusal of what the call asked (a bad domain): its inputs become error records, the job goes on.
        if (!(error instanceof KitError) || !error.rule.perRecord) throw error;
        const code = (error as { code?: string }).code ?? 'request_rejected';
        results = send.map((item) => ({ domain: item.v, status: 'error', error: { code, message: error.message } }));
      }
    }

    // Encoded before anything is awaited, so that the parsed answer is garbage while the part is being written.
    const calls = (existing ? (existing.counts.calls ?? 1) : 0) + (answered ? 1 : 0);
    const assembled = assemblePart(job, index, items, paid, folded, send, results, { credits, calls });
    results = [];
    const partial = send.length < pending.length;
    const { counts, signals } = assembled;
    const status = partial ? 'partial' : 'done';
    const published = await publishPaidLines(
      store,
      key,
      found,
      identity,
      answered ? [answered] : [],
      { compression: job.compression, body: assembled.body, tables: assembled.tables, counts, status },
      attempt.spool,
    );
    if (published.lost) return reusedResult(index, lostRace(key, store, published.part));
    return {
      index,
      reused: false,
      failed: false,
      ...(partial ? { partial } : {}),
      counts: published.part.counts,
      signals,
    };
  },
);

/** The part's lines in input order (earlier paid lines kept, this call's results added), encoded, and their counts. */
function assemblePart(
  job: JobRef,
  index: number,
  items: BatchItem[],
  paid: PaidLines,
  folded: Map<string, SharedAnswer>,
  send: BatchItem[],
  results: BulkEnrichItem[],
  { credits, calls }: { credits: number; calls: number },
): { body: Buffer; tables: EncodedTablePart[]; counts: PartCounts; signals: number } {
  const byDomain = new Map(results.map((result) => [result.domain.toLowerCase(), result]));
  const sent = new Set(send.map((item) => item.v));
  const earlier = new Map(paid.lines.map((line) => [String(line.domain), line]));
  const counts: PartCounts = { ...zeroCounts(), credits: paid.credits + credits, calls };
  const lines: Record<string, unknown>[] = [];
  let signals = 0;
  for (const item of items) {
    let line = earlier.get(item.v);
    const shared = folded.get(item.v);
    if (!line && shared) line = duplicateLine(item, 'domain', shared);
    if (!line && sent.has(item.v)) {
      const { domain: _domain, status, ...rest } = byDomain.get(item.v) ?? missing(item.v);
      line = {
        domain: item.v,
        status,
        row: item.row,
        ...recordFields(item),
        matched_by: 'domain',
        input: item.raw,
        ...rest,
      };
    }
    if (!line) continue; // left for a later call: the budget did not reach it
    counts.lines += 1;
    if (line.status === 'duplicate') counts.duplicate = (counts.duplicate ?? 0) + 1;
    else counts[line.status as 'ok' | 'not_found' | 'error'] += 1;
    if (Array.isArray(line['signals'])) signals += line['signals'].length;
    lines.push(line);
  }
  return {
    body: encodePart(job.compression, lines),
    tables: encodeJobTables(job, partKey(job, index), lines),
    counts,
    signals,
  };
}

function missing(domain: string): BulkEnrichItem {
  return {
    domain,
    status: 'error',
    error: { code: 'missing_result', message: 'the service returned no result for this domain' },
  };
}
