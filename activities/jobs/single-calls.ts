import { KitError } from '../../connectors/errors.ts';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { CallOptions } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type OpenBatch, type PaidBatchActivity, publishSpooled, reusedResult } from '../paid/paid-batch.ts';
import { type AttemptContext, lostRace, type PaidAnswer, publishPaidLines, sendPaidCall } from '../paid/paid-call.ts';
import { BATCH_FAILED } from '../paid/paid-lines.ts';
import { encodePart, readPartLines, zeroCounts } from '../run/parts.ts';
import { type BatchItem, readSeriesBatch, recordFields } from './batch-file.ts';
import { SINGLE_MARKER_BASE, singlePartKey } from './layout.ts';
import { paidBatchActivity } from './paid-batch.ts';
import { encodeJobTables } from './tables.ts';
import type { BatchResult, JobRef, PartCounts } from './types.ts';

/** What one paid call answered for one item: its output line (with `status`) and what the service charged. */
interface SingleAnswer {
  line: Record<string, unknown> & { status: string };
  credits: number;
}

/** A batch answered one call per item, with the options every call sends and the job's remaining budget. */
export interface PerItemBatchRequest<Options> {
  job: JobRef;
  index: number;
  options: Options;
  creditCap?: number;
}

interface SingleBatchRequest {
  job: JobRef;
  index: number;
  /** The part's credits may not go over this: only the items that fit at `worstCasePerItem` are sent. */
  creditCap?: number;
  worstCasePerItem: number;
}

/**
 * Answers single batch `index` (`work/single-N` into `parts/single-N`, not complete yet: `batch`) with several paced
 * calls, one per item (rows identified without a domain, contacts): the same lost-answer markers, budget cap, part
 * writer and spool as a bulk batch. `call` answers one item with the call options it is given (the client paces it
 * through the account's limiter; the activity's retry, not the client's, tries again); `refusal` turns a refusal of
 * the item itself (a 404, a 400/422) into its `not_found` or `error` line (free), any other failure goes up.
 *
 * Answers are paid one at a time, so none is lost to a later failure: when a call fails, the items answered so far
 * are published in a `failed` part (naming their calls, which settles their markers) before the error goes up, and
 * the activity's retry sends only the others.
 */
async function answerSingleBatch(
  store: Store,
  request: SingleBatchRequest,
  { key, identity, found }: OpenBatch,
  call: (item: BatchItem, options: CallOptions) => Promise<SingleAnswer>,
  refusal: (item: BatchItem, error: unknown) => SingleAnswer | undefined,
  attempt: AttemptContext,
): Promise<BatchResult> {
  const { job, index } = request;
  const existing = found.part;
  const items = await readSeriesBatch(store, job, 'single', index);
  const answered = new Map<number, Record<string, unknown>>();
  let credits = 0;
  let calls = 0;
  if (existing) {
    for (const line of await readPartLines(store, key)) {
      if (!isUnanswered(line)) answered.set(Number(line['row']), line);
    }
    credits = existing.counts.credits;
    calls = existing.counts.calls ?? 0;
  }
  const pending = items.filter((item) => !answered.has(item.row));
  const fit =
    request.creditCap === undefined
      ? pending.length
      : Math.max(0, Math.floor((request.creditCap - credits) / request.worstCasePerItem));
  if (fit === 0 && pending.length > 0) {
    return { index, reused: true, failed: false, partial: true, counts: existing?.counts ?? zeroCounts() };
  }
  const send = pending.slice(0, fit);
  const answeredBefore = answered.size;
  // The paid answers this attempt adds to the part: being named there settles their markers.
  const paid: PaidAnswer[] = [];
  let signals = 0;
  // Through the part writer every paid batch shares: the race with another attempt, and the spool on a refusal.
  const publish = (status: 'done' | 'partial' | 'failed') => {
    const lines = items.map((item) => answered.get(item.row)).filter((line) => line !== undefined);
    return publishPaidLines(
      store,
      key,
      found,
      identity,
      paid,
      {
        compression: job.compression,
        body: encodePart(job.compression, lines),
        tables: encodeJobTables(job, key, lines),
        counts: countLines(lines, credits, calls),
        status,
      },
      attempt.spool,
    );
  };
  for (const item of send) {
    let answer: SingleAnswer;
    try {
      // Another batch's answer that the output refused stops this one too: no call while the spool holds it.
      await publishSpooled(store, job, attempt);
      const sent = await sendPaidCall(store, job, SINGLE_MARKER_BASE + index, attempt, (options) =>
        call(item, options),
      );
      answer = sent.response;
      paid.push({ marker: sent.marker, credits: sent.response.credits });
      calls += 1;
    } catch (error) {
      const refused = refusal(item, error);
      if (!refused) {
        // Gone for good or not, the answers paid so far are kept; the retry (or a re-run) sends the rest.
        if (answered.size > answeredBefore) await publish('failed');
        throw error;
      }
      answer = refused;
      // A refusal the service sent (a 404, a 422) is an answered call too; one checked before sending is not.
      if (Number((error as { status?: unknown }).status) > 0) calls += 1;
    }
    answered.set(item.row, answer.line);
    credits += answer.credits;
    if (Array.isArray(answer.line['signals'])) signals += answer.line['signals'].length;
  }
  const partial = send.length < pending.length;
  const published = await publish(partial ? 'partial' : 'done');
  if (published.lost) return reusedResult(index, lostRace(key, store, published.part));
  const counts = published.part.counts;
  return { index, reused: false, failed: false, ...(partial ? { partial } : {}), counts, signals };
}

function isUnanswered(line: Record<string, unknown>): boolean {
  const error = line['error'] as { code?: unknown } | undefined;
  return line['status'] === 'error' && error?.code === BATCH_FAILED;
}

function countLines(lines: Record<string, unknown>[], credits: number, calls: number): PartCounts {
  const counts: PartCounts = { ...zeroCounts(), credits, calls };
  for (const line of lines) {
    counts.lines += 1;
    const status = line['status'];
    if (status === 'ok' || status === 'not_found' || status === 'error') counts[status] += 1;
    else if (status === 'duplicate') counts.duplicate = (counts.duplicate ?? 0) + 1;
  }
  return counts;
}

/** A per-record refusal (400/404/422) as its code and message; anything else is not the item's own fault. */
export function itemRefusal(error: unknown): { code: string; message: string; notFound: boolean } | undefined {
  if (!(error instanceof KitError) || !error.rule.perRecord) return undefined;
  const status = (error as { status?: number }).status;
  const code = (error as { code?: string }).code ?? 'request_rejected';
  return { code, message: error.message, notFound: status === 404 };
}

/** What one item's call answered: the line's own fields (the company the service resolved among them), its cost. */
export interface ItemAnswer {
  credits: number;
  fields: Record<string, unknown> & { company?: { domain?: unknown } };
}

/** Sends one item's paced call with the job's options; `matchedBy` is the identifier of the item to send. */
export type ItemCall<Options> = (
  client: SignalClient,
  item: BatchItem,
  matchedBy: string,
  options: Options,
  call: CallOptions,
) => Promise<ItemAnswer>;

/**
 * The activity that answers a batch one paced call per item through `answerSingleBatch`: `ask` sends the item's call
 * with the request's options. Every line starts with the item's head (row, record fields, `matched_by`, input) and
 * the domain the service resolved; a refusal of the item becomes its free `not_found` or `error` line under that head.
 */
export function perItemBatchActivity<Options>(
  worstCasePerItem: (options: Options) => number,
  matchedBy: (item: BatchItem) => string,
  ask: ItemCall<Options>,
): PaidBatchActivity<PerItemBatchRequest<Options>> {
  const head = (item: BatchItem) => ({
    row: item.row,
    ...recordFields(item),
    matched_by: matchedBy(item),
    input: item.raw,
  });
  return paidBatchActivity<PerItemBatchRequest<Options>>(
    ({ job, index }) => singlePartKey(job, index),
    (client, store, request, batch, attempt) =>
      answerSingleBatch(
        store,
        {
          job: request.job,
          index: request.index,
          ...(request.creditCap !== undefined ? { creditCap: request.creditCap } : {}),
          worstCasePerItem: worstCasePerItem(request.options),
        },
        batch,
        async (item, call) => {
          const { credits, fields } = await ask(client, item, matchedBy(item), request.options, call);
          return { credits, line: { domain: resolvedDomain(fields.company), status: 'ok', ...head(item), ...fields } };
        },
        (item, error) => refusedAnswer(head, item, error),
        attempt,
      ),
  );
}

/** A thing the service does not know is `not_found`, a request it refuses an `error` line; both free. */
function refusedAnswer(
  head: (item: BatchItem) => Record<string, unknown>,
  item: BatchItem,
  error: unknown,
): SingleAnswer | undefined {
  const refusal = itemRefusal(error);
  if (!refusal) return undefined;
  const fields = head(item);
  if (refusal.notFound) return { credits: 0, line: { domain: null, status: 'not_found', ...fields } };
  return {
    credits: 0,
    line: { domain: null, status: 'error', ...fields, error: { code: refusal.code, message: refusal.message } },
  };
}

/** The domain a service's company answer resolved, lower-cased; null when it has none. */
function resolvedDomain(company: { domain?: unknown } | undefined): string | null {
  const domain = company?.domain;
  return typeof domain === 'string' && domain !== '' ? domain.toLowerCase() : null;
}
