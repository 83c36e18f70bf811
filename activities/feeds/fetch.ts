import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { CallOptions } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { publishSpooled } from '../paid/paid-batch.ts';
import { type AttemptContext, lostRace, publishPaidPart, sendPaidCall } from '../paid/paid-call.ts';
import {
  optionsHash,
  type PartIdentity,
  type PartRead,
  readPart,
  readPartLines,
  writePart,
  zeroCounts,
} from '../run/parts.ts';
import { answerKey, callsPrefix, workPrefix } from '../run/scheduled-layout.ts';
import type { FeedCallResult, FeedPageRequest, FeedRunRef, FeedSearchRequest } from './types.ts';

/** The most items one search call returns; every feed search asks for that many. */
export const SEARCH_LIMIT = 100;

/** A saved answer: the items of one call and what it established. */
export interface SavedAnswer extends Omit<FeedCallResult, 'calls'> {
  items: Record<string, unknown>[];
  /** The hash of the question asked (its identity's `options`), so that finalize can check whose it is. */
  question?: string;
}

/** What a paid call answered: its cost and items (and, for intent, where the next page starts). */
type Answered = Omit<SavedAnswer, 'index' | 'count' | 'question'>;

const once = { retry: false } as const;

/** Whose a feed answer is: the run, a hash of the question asked (filters, time bound, cursor), the call's index. */
export function feedAnswerIdentity(run: FeedRunRef, index: number, question: unknown): PartIdentity {
  return { owner: `${run.name}/run-${run.runId}`, options: optionsHash(question), index };
}

/** One search call of a feed run (company or contact search), or its saved answer (see `answerOnce`). */
export async function fetchFeedSearch(
  client: SignalClient,
  store: Store,
  request: FeedSearchRequest,
  attempt: AttemptContext = { attempt: 1 },
): Promise<FeedCallResult> {
  const { filters } = request.slice;
  const after = request.detected_after ? { detected_after: request.detected_after } : {};
  const identity = feedAnswerIdentity(request.run, request.index, { filters, ...after });
  const search = async (call: CallOptions): Promise<Answered> => {
    const answer =
      request.run.kind === 'company-search'
        ? await client.searchCompanies(
            {
              ...after,
              limit: SEARCH_LIMIT,
              ...pick(filters, ['signal_types', 'industries', 'employee_count_min', 'employee_count_max']),
              ...(filters.content_filters ? { content_filters: filters.content_filters } : {}),
            },
            call,
          )
        : await client.searchContacts(
            {
              ...after,
              limit: SEARCH_LIMIT,
              ...pick(filters, ['signal_types', 'seniority', 'department', 'job_title']),
            },
            call,
          );
    const items = ('companies' in answer ? answer.companies : answer.contacts) as Record<string, unknown>[];
    return { credits: answer.credits, items };
  };
  // Splitting a full answer with no single type needs every type there is (a free call, made before the answer is
  // saved so that a retry finds it whole).
  const complete = async (answered: Answered): Promise<Answered> => {
    const capped = answered.items.length >= SEARCH_LIMIT;
    const types =
      capped && filters.signal_types?.length !== 1 ? await signalTypes(client, request.run.kind) : undefined;
    return { ...answered, capped, ...(types ? { types } : {}) };
  };
  return answerOnce(store, request.run, identity, attempt, search, complete);
}

/** One page of buyer-intent contacts (following the previous page's cursor), or its saved answer. */
export async function fetchFeedPage(
  client: SignalClient,
  store: Store,
  request: FeedPageRequest,
  attempt: AttemptContext = { attempt: 1 },
): Promise<FeedCallResult> {
  const question = { filters: request.filters, pageSize: request.pageSize, cursor: request.cursor };
  const identity = feedAnswerIdentity(request.run, request.index, question);
  return answerOnce(store, request.run, identity, attempt, async (call) => {
    const page = await client.buyerIntentContacts(
      { ...request.filters, page_size: request.pageSize, ...(request.cursor ? { cursor: request.cursor } : {}) },
      call,
    );
    return {
      credits: page.credits,
      next_cursor: page.next_cursor,
      items: page.contacts as unknown as Record<string, unknown>[],
    };
  });
}

/**
 * A call's saved answer (`<name>/work/run-<id>/answer-<index>.json`, one JSON line with a part's metadata: whose it
 * is and the paid call it holds) when an earlier attempt or try of the run saved it; else the call, paid once or
 * counted through the jobs' machinery (docs/paid-answers.md): what the worker's spool kept of the run is published
 * first; the call is sent under a marker in the run's `work/calls/` with the attempt's cancellation (`sendPaidCall`);
 * the answer is published by `publishPaidPart`, so that an attempt that finds it saved by another one meanwhile keeps
 * its marker with the credits the service said, and an output that refuses the write for good stops the run with the
 * answer in the worker's spool, for the next try of the run to publish before any call.
 */
async function answerOnce(
  store: Store,
  run: FeedRunRef,
  identity: PartIdentity,
  attempt: AttemptContext,
  paid: (call: CallOptions) => Promise<Answered>,
  complete: (answered: Answered) => Promise<Answered> = async (answered) => answered,
): Promise<FeedCallResult> {
  const key = answerKey(run, identity.index);
  await publishSpooled(store, [workPrefix(run)], attempt);
  const seen = await readPart(store, key, identity);
  const saved = await savedAnswer(store, key, seen);
  if (saved) return summary(saved, 0);

  const { response, marker } = await sendPaidCall(
    store,
    { callsPrefix: callsPrefix(run) },
    identity.index,
    attempt,
    paid,
  );
  let answer: SavedAnswer;
  try {
    const done = await complete(response);
    answer = { index: identity.index, count: done.items.length, ...done, question: identity.options };
  } catch (error) {
    await marker.lost(response.credits, `answered, but the answer could not be completed: ${String(error)}`);
    throw error;
  }
  // Only the fingerprint of what was there: an answer that did not prove itself is replaced, not continued.
  const replaced = seen.fingerprint === undefined ? {} : { fingerprint: seen.fingerprint };
  const counts = { ...zeroCounts(), lines: 1, credits: response.credits };
  const write = (calls: string[], target: Store) =>
    writePart(target, 'none', key, [answer], counts, 'done', calls, identity);
  const paidFor = [{ marker, credits: response.credits }];
  const published = await publishPaidPart(store, key, replaced, identity, paidFor, write, attempt.spool);
  if (published.lost) {
    const theirs = await savedAnswer(store, key, await readPart(store, key, identity));
    if (theirs) return summary(theirs, 0);
    lostRace(key, store, undefined);
  }
  return summary(answer, 1);
}

/** The answer saved under `key`, when the part read there proved itself. */
async function savedAnswer(store: Store, key: string, seen: PartRead): Promise<SavedAnswer | undefined> {
  if (!seen.part || seen.part.failed) return undefined;
  const [answer] = await readPartLines<SavedAnswer>(store, key);
  return answer && Array.isArray(answer.items) ? answer : undefined;
}

function summary(answer: SavedAnswer, calls: number): FeedCallResult {
  const { items: _items, question: _question, ...rest } = answer;
  return { ...rest, calls };
}

/** Signal types a search of this kind can be split by: person-level ones for contact search, when the service says. */
async function signalTypes(client: SignalClient, kind: FeedSearchRequest['run']['kind']): Promise<string[]> {
  const { types } = await client.listSignalTypes(once);
  const wanted =
    kind === 'contact-search' ? types.filter((t) => (t as { association?: unknown }).association !== 'company') : types;
  return wanted.map((t) => t.signal_type);
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}
