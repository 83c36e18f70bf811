/**
 * Shapes that cross the workflow/activity boundary for scheduled feeds (search and buyer-intent results delivered
 * to a bucket on a schedule). All small: filters, cursors and counts; the answers themselves live in the bucket.
 */

import type { z } from 'zod';
import type {
  BuyerIntentContactsParams,
  SearchCompaniesParams,
  SearchContactsParams,
} from '../../connectors/signal-api/types.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import type { FeedManifestSchema, Written } from '../../contract/manifest-schemas.ts';
import type { JobStatus, ScheduledRunRef } from '../run/types.ts';

/** A feed's run: a scheduled run (name, output, run id from the scheduled time, `dt=` date) of one kind of feed. */
export type FeedRunRef = ScheduledRunRef & { kind: FeedKind };

/** `POST /v1/companies/search` filters a feed may carry (spec 4.4), in the API's field names. */
export type CompanySearchFilters = Omit<SearchCompaniesParams, 'detected_after' | 'limit' | 'content_filters'> & {
  /** As the command reads them: lists of strings by filter name. */
  content_filters?: Record<string, string[]>;
};

/** `POST /v1/contacts/search` filters (spec 4.5); each run sets the window and the page size itself. */
export type ContactSearchFilters = Omit<SearchContactsParams, 'detected_after' | 'limit'>;

/** `POST /v1/buyer-intent/contacts` filters (spec 4.9); the run pages through them itself. */
export type IntentFilters = Omit<BuyerIntentContactsParams, 'page_size' | 'cursor'>;

export type SearchFilters = CompanySearchFilters & ContactSearchFilters;
export type FeedFilters = SearchFilters | IntentFilters;

/** One search request of a run: the feed's filters, narrowed by the splits that led to it. */
export interface FeedSlice {
  index: number;
  filters: SearchFilters;
  /** How it was narrowed from its parent (`signal_types=news`, `employee_count=0-499`), for the manifest. */
  via?: string;
}

/** What `prepareFeedRun` fixed for the run: the lower time bound of every search call (null: none). */
export interface FeedPlan {
  detected_after: string | null;
  /** The run whose commit wrote the state this run starts from (null: none yet). */
  state_from: string | null;
  /** Keys already delivered by earlier runs. */
  known: number;
}

export interface FeedCallRequest {
  run: FeedRunRef;
  index: number;
}

export interface FeedSearchRequest extends FeedCallRequest {
  slice: FeedSlice;
  detected_after: string | null;
}

export interface FeedPageRequest extends FeedCallRequest {
  filters: IntentFilters;
  cursor: string | null;
  pageSize: number;
}

/** What one call of a run established (its answer is saved under the run's work prefix). */
export interface FeedCallResult {
  index: number;
  /** Items the answer held. */
  count: number;
  credits: number;
  /** API calls made (0 when the saved answer of an earlier attempt was found). */
  calls: number;
  /** Search: the answer is full (as many items as the service returns at most), so more may match. */
  capped?: boolean;
  /** Search answers that are capped with no type filter: every signal type the slice may be split into. */
  types?: string[];
  /** Buyer intent: where the next page starts (null: this was the last). */
  next_cursor?: string | null;
}

/** A part of the request a run could not complete, named in the manifest. */
export interface IncompleteSlice {
  /** The slice's filters (search) or the page it stopped before (intent). */
  filters?: SearchFilters;
  via?: string;
  /**
   * `capped`: the answer was full and no allowed filter narrows it further; older matches are not delivered.
   * `budget`: `--max-credits` stopped the run before this call. `failed`: its retries were spent.
   * `slice_limit`: the run reached its most calls before splitting this one.
   */
  reason: 'capped' | 'budget' | 'failed' | 'slice_limit';
  returned?: number;
}

export interface FinalizeFeedRequest {
  run: FeedRunRef;
  /** How the run ended: never `running`, which no manifest may say. */
  status: FeedManifest['status'];
  startedAt: string;
  scheduledAt: string;
  /** Calls of the run (answer indexes 0..calls-1 that exist are read). */
  calls: number;
  incomplete: IncompleteSlice[];
  filters: FeedFilters;
  compression?: 'gzip' | 'none';
  error?: string;
  details?: Record<string, unknown>;
}

/** A feed run's `_manifest.json`, as the output contract describes it (contract/manifest-schemas.ts). */
export type FeedManifest = Written<z.output<typeof FeedManifestSchema>>;

/** What a feed run returns: where its manifest is and its headline numbers. */
export interface FeedResult {
  name: string;
  kind: FeedKind;
  runId: string;
  dt: string;
  status: JobStatus;
  manifestUrl: string;
  new: number;
  returned: number;
  credits: number;
  calls: number;
  parts: number;
  incomplete: number;
  /** The incomplete slices by why (absent in results of runs finalized before it was counted). */
  incompleteBy?: Partial<Record<IncompleteSlice['reason'], number>>;
}
