import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_RULES, FAILURE_TYPE, SignalApiError } from '../connectors/errors.ts';
import type { SignalClient } from '../connectors/signal-api/client.ts';

/** One look-up in the service's free catalogs, as `signal-kit topics search` and `signal-kit signal-types` ask. */
export type CatalogRequest = { what: 'topics'; q: string; limit: number; cursor?: string } | { what: 'signal-types' };

export interface CatalogTopic {
  topic_id: string;
  name: string;
  category?: string;
}

export interface CatalogSignalType {
  signal_type: string;
  category?: string;
  description?: string;
  subtypes: string[];
  signal_count?: number;
}

export type CatalogAnswer =
  | { what: 'topics'; topics: CatalogTopic[]; next_cursor: string | null }
  | { what: 'signal-types'; types: CatalogSignalType[] };

/**
 * Makes one catalog call (both are free). It runs on the rate-limited API queue like every other call, so a user
 * looking up topic ids shares the account's budget with running jobs instead of competing with them.
 */
export async function lookupCatalog(client: SignalClient, request: CatalogRequest): Promise<CatalogAnswer> {
  const once = { retry: false } as const;
  try {
    if (request.what === 'topics') {
      const page = await client.searchTopics(
        { q: request.q, limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) },
        once,
      );
      return {
        what: 'topics',
        topics: page.topics.map(({ topic_id, name, category }) => ({
          topic_id,
          name,
          ...(category ? { category } : {}),
        })),
        next_cursor: page.next_cursor,
      };
    }
    const answer = await client.listSignalTypes(once);
    return {
      what: 'signal-types',
      types: answer.types.map(({ signal_type, category, description, subtypes, signal_count }) => ({
        signal_type,
        subtypes,
        ...(category ? { category } : {}),
        ...(description ? { description } : {}),
        ...(signal_count !== undefined ? { signal_count } : {}),
      })),
    };
  } catch (error) {
    if (!(error instanceof SignalApiError) || error.retryable) throw error;
    throw ApplicationFailure.create({
      message: error.message,
      type: FAILURE_TYPE.catalogApi,
      nonRetryable: !FAILURE_RULES.catalogApi.retryable,
      details: [error.toJSON()],
    });
  }
}
