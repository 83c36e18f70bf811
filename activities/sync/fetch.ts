import type { SignalClient } from '../../connectors/signal-api/client.ts';
import { CREDITS } from '../../connectors/signal-api/limits.ts';
import type { BulkEnrichItem, EnrichCompaniesParams, Signal } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { sendBulkEnrich } from '../paid/bulk-enrich-call.ts';
import { awaitEarlierCall } from '../paid/earlier-call.ts';
import { publishSpooled } from '../paid/paid-batch.ts';
import { type AttemptContext, lostRace, type PaidAnswer, publishPaidPart } from '../paid/paid-call.ts';
import type { PartIdentity, PartRead } from '../run/parts.ts';
import { optionsHash, readPart, readPartLines, writePart, zeroCounts } from '../run/parts.ts';
import { answerKey, callsPrefix } from '../run/scheduled-layout.ts';
import type { BatchResult, PartCounts } from '../run/types.ts';
import { syncBatchKey, syncRunFolders, syncWorkRoot } from './layout.ts';
import type {
  CompanyAnswer,
  HeldSignal,
  SyncAnswer,
  SyncBatch,
  SyncBatchRequest,
  SyncFilters,
  SyncRunRef,
} from './types.ts';

/**
 * Publishes the answers of any earlier run of the schedule that its output refused and this worker's spool kept,
 * before the night plans: the night that carries that run on then takes them in, and asks none of them again.
 */
export async function publishKeptSyncAnswers(
  store: Store,
  request: { run: SyncRunRef },
  attempt: AttemptContext,
): Promise<void> {
  await publishSpooled(store, [syncWorkRoot(request.run.name)], attempt);
}

/** A batch of a sync run asked of the service: its API client, the output, the batch, the attempt running it. */
export type SyncFetch = (
  client: SignalClient,
  store: Store,
  request: SyncBatchRequest,
  attempt: AttemptContext,
) => Promise<BatchResult>;

/**
 * Asks batch `index` of a run with one bulk call: its companies' signals after the lowest start among them, each
 * company keeping only those after its own start. Saves the answer (`answer-<index>.json`) as the batch's receipt:
 * a retried or repeated batch that finds it returns its counts without calling the service.
 *
 * Paid once, or counted, as every paid batch is (docs/paid-answers.md): the call goes under a marker in the run's
 * `work/calls/` (`sendPaidCall`); the answer is published by `publishPaidPart`, which names the call, and an attempt
 * that finds the answer saved by another first keeps its marker with the credits the service said. An attempt
 * started while an earlier attempt's call is on its way (its heartbeat lapsed) waits for that call and takes its
 * answer (`earlier-call.ts`); the earlier attempt, cancelled meanwhile, still saves the answer it reads.
 */
export async function fetchSyncBatch(
  client: SignalClient,
  store: Store,
  request: SyncBatchRequest,
  attempt: AttemptContext,
): Promise<BatchResult> {
  const { run, index, filters } = request;
  const key = answerKey(run, index);
  // Whose the answer is: the sync's run, the filters of its calls, and the batch.
  const identity = { owner: `${run.name}/run-${run.runId}`, options: optionsHash(filters), index };
  await publishSpooled(store, syncRunFolders(run), attempt);
  const marked = { callsPrefix: callsPrefix(run) };
  let seen = await readPart(store, key, identity);
  const saved = await savedResult(store, key, index, seen);
  if (saved) return saved;
  const theirs = await awaitEarlierCall(store, marked, index, attempt, async () => {
    seen = await readPart(store, key, identity);
    return savedResult(store, key, index, seen);
  });
  if (theirs) return theirs;

  const batch = JSON.parse(await store.readText(syncBatchKey(run, index))) as SyncBatch;
  const keep = { keepCancelledAnswer: true };
  const sent = await sendBulkEnrich(client, store, marked, index, attempt, bulkRequest(batch, filters), keep);
  const { answered } = sent;
  const answer = collect(batch, sent.results, run.at);
  answer.credits = answered?.credits ?? 0;
  answer.calls = answered ? 1 : 0;
  const counts = countsOf(answer);
  const replaced = seen.fingerprint === undefined ? {} : { fingerprint: seen.fingerprint };
  const published = await publishAnswer(store, key, replaced, identity, answered, answer, counts, attempt.spool);
  // Cancelled while its call was on its way: the answer is saved for the attempt that replaced this one.
  if (sent.cancelled) throw sent.cancelled.reason;
  if (published.lost) {
    const theirs = await savedResult(store, key, index, await readPart(store, key, identity));
    if (theirs) return theirs;
    lostRace(key, store, undefined);
  }
  return { index, reused: false, failed: false, counts };
}

/** The answers a run's batches saved, by batch index (absent: not answered). */
export async function readSyncAnswer(store: Store, name: string, runId: string, index: number) {
  try {
    const [answer] = await readPartLines<SyncAnswer>(store, answerKey({ name, runId }, index));
    return answer;
  } catch (error) {
    if ((error as { name?: string }).name === 'ObjectNotFoundError') return undefined;
    throw error;
  }
}

async function savedResult(store: Store, key: string, index: number, seen: PartRead): Promise<BatchResult | undefined> {
  if (!seen.part || seen.part.failed) return undefined;
  const [answer] = await readPartLines<SyncAnswer>(store, key);
  return answer ? { index, reused: true, failed: false, counts: countsOf(answer) } : undefined;
}

function bulkRequest(batch: SyncBatch, filters: SyncFilters): EnrichCompaniesParams {
  return {
    domains: batch.domains.map((entry) => entry.domain),
    ...(batch.detected_after ? { detected_after: batch.detected_after } : {}),
    ...(filters.signal_types?.length ? { signal_types: filters.signal_types } : {}),
    limit: filters.limit,
  };
}

/**
 * Each company's signals after its own start. A call asks all its companies from one start, so nothing before it
 * comes back; a signal that does anyway (held already) is paid again and counted as overlap, never taken twice.
 */
function collect(batch: SyncBatch, results: readonly BulkEnrichItem[], asOf: string): SyncAnswer {
  const byDomain = new Map(results.map((result) => [result.domain.toLowerCase(), result]));
  const answer: SyncAnswer = {
    index: batch.index,
    as_of: asOf,
    credits: 0,
    calls: 0,
    overlap: { signals: 0, credits: 0 },
    domains: {},
  };
  for (const { domain, start } of batch.domains) {
    const result = byDomain.get(domain);
    if (!result) {
      answer.domains[domain] = {
        status: 'error',
        signals: [],
        error: { code: 'missing_result', message: 'the service returned no result for this company' },
      };
      continue;
    }
    if (result.status !== 'ok') {
      answer.domains[domain] =
        result.status === 'not_found'
          ? { status: 'not_found', signals: [] }
          : {
              status: 'error',
              signals: [],
              error: { code: result.error?.code ?? 'error', message: result.error?.message ?? 'error' },
            };
      continue;
    }
    const { kept: signals, overlap } = keptSignals(result.signals ?? [], start);
    answer.overlap.signals += overlap;
    answer.overlap.credits += overlap * CREDITS.perEnrichedSignal;
    const company = companyOf(result.company);
    answer.domains[domain] = { status: 'ok', company, signals };
  }
  return answer;
}

/**
 * Publishes a saved answer (one JSON line holding `record`, its metadata counting that line, as the proof of a part
 * reads it back) under the markers of the paid call it holds, unless another attempt saved it first.
 */
export function publishAnswer<T extends { paid_calls?: string[] }>(
  store: Store,
  key: string,
  seen: Pick<PartRead, 'fingerprint'>,
  identity: PartIdentity,
  answered: PaidAnswer | undefined,
  record: T,
  counts: PartCounts,
  spool: AttemptContext['spool'],
) {
  const write = (calls: string[], target: Store) => {
    record.paid_calls = calls;
    return writePart(target, 'none', key, [record], { ...counts, lines: 1 }, 'done', calls, identity);
  };
  return publishPaidPart(store, key, seen, identity, answered ? [answered] : [], write, spool);
}

/** The signals after `start` as the state holds them, and how many came back from before it (paid, not kept). */
export function keptSignals(signals: readonly Signal[], start: string | null): { kept: HeldSignal[]; overlap: number } {
  const from = start === null ? Number.NEGATIVE_INFINITY : Date.parse(start);
  const kept: HeldSignal[] = [];
  let overlap = 0;
  for (const signal of signals) {
    if (Date.parse(signal.detected_at) <= from) {
      overlap += 1;
      continue;
    }
    const summary = signal.data?.summary;
    kept.push({
      signal_id: signal.signal_id,
      signal_type: signal.signal_type,
      detected_at: signal.detected_at,
      ...(typeof summary === 'string' ? { data: { summary } } : {}),
    });
  }
  return { kept, overlap };
}

/** The company fields the rows table shows, as the service gave them. */
export function companyOf(
  company: { name?: string; domain?: string; linkedin_url?: string | null } | null | undefined,
) {
  const out: CompanyAnswer['company'] = {};
  if (company?.name) out.name = company.name;
  if (company?.domain) out.domain = company.domain;
  if (company?.linkedin_url) out.linkedin_url = company.linkedin_url;
  return out;
}

export function countsOf(answer: SyncAnswer): PartCounts {
  const counts: PartCounts = { ...zeroCounts(), credits: answer.credits, calls: answer.calls };
  for (const company of Object.values(answer.domains)) {
    counts[company.status] += 1;
    counts.lines += company.signals.length;
  }
  return counts;
}
