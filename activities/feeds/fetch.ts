import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { readJsonIfPresent } from '../../connectors/storage/store-io.ts';
import { answerKey } from '../push/layout.ts';
import type { FeedCallResult, FeedPageRequest, FeedSearchRequest } from './types.ts';

/** The most items one search call returns; every feed search asks for that many. */
export const SEARCH_LIMIT = 100;

/** A saved answer: the items of one call and what it established. */
export interface SavedAnswer extends Omit<FeedCallResult, 'calls'> {
  items: Record<string, unknown>[];
}

const once = { retry: false } as const;

/**
 * One search call of a feed run (company or contact search), or its saved answer when an earlier attempt already
 * paid for it: the answer is saved before the activity returns, so a retry after a crash never pays twice.
 */
export async function fetchFeedSearch(
  client: SignalClient,
  store: Store,
  request: FeedSearchRequest,
): Promise<FeedCallResult> {
  return answerOnce(store, answerKey(request.run, request.index), async () => {
    const { filters } = request.slice;
    const after = request.detected_after ? { detected_after: request.detected_after } : {};
    const answer =
      request.run.kind === 'company-search'
        ? await client.searchCompanies(
            {
              ...after,
              limit: SEARCH_LIMIT,
              ...pick(filters, ['signal_types', 'industries', 'employee_count_min', 'employee_count_max']),
              ...(filters.content_filters ? { content_filters: filters.content_filters } : {}),
            },
            once,
          )
        : await client.searchContacts(
            {
              ...after,
              limit: SEARCH_LIMIT,
              ...pick(filters, ['signal_types', 'seniority', 'department', 'job_title']),
            },
            once,
          );
    const items = ('companies' in answer ? answer.companies : answer.contacts) as Record<string, unknown>[];
    const capped = items.length >= SEARCH_LIMIT;
    // Splitting a full answer with no single type needs every type there is (a free call).
    const types =
      capped && filters.signal_types?.length !== 1 ? await signalTypes(client, request.run.kind) : undefined;
    return {
      index: request.index,
      count: items.length,
      credits: answer.credits,
      capped,
      ...(types ? { types } : {}),
      items,
    };
  });
}

/** One page of buyer-intent contacts (following the previous page's cursor), or its saved answer. */
export async function fetchFeedPage(
  client: SignalClient,
  store: Store,
  request: FeedPageRequest,
): Promise<FeedCallResult> {
  return answerOnce(store, answerKey(request.run, request.index), async () => {
    const page = await client.buyerIntentContacts(
      { ...request.filters, page_size: request.pageSize, ...(request.cursor ? { cursor: request.cursor } : {}) },
      once,
    );
    return {
      index: request.index,
      count: page.contacts.length,
      credits: page.credits,
      next_cursor: page.next_cursor,
      items: page.contacts as unknown as Record<string, unknown>[],
    };
  });
}

/**
 * The call's saved answer when an earlier attempt already paid for it; else `call`'s answer, saved before the
 * activity returns so that a retry after a crash never pays twice.
 */
async function answerOnce(store: Store, key: string, call: () => Promise<SavedAnswer>): Promise<FeedCallResult> {
  const saved = await readJsonIfPresent<SavedAnswer>(store, key);
  if (saved) return summary(saved, 0);
  const result = await call();
  await store.writeText(key, JSON.stringify(result), { contentType: 'application/json' });
  return summary(result, 1);
}

function summary(answer: SavedAnswer, calls: number): FeedCallResult {
  const { items: _items, ...rest } = answer;
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
