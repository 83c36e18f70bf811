/** Task queues. API calls run on their own queue, whose server-side rate limit is the account's budget. */
export const DEFAULT_TASK_QUEUE = 'signal-kit';
export const DEFAULT_API_TASK_QUEUE = 'signal-kit-api';

/**
 * Batches in flight at once when a job does not say (its window). API batches wait in the rate-limited queue, where
 * waiting costs nothing; the window must keep that queue from running dry, because Temporal divides a task queue's
 * rate limit among its partitions and a partition with no task waiting loses its share. On a dev server's default
 * 4 partitions, two workers used 78% of a 300/min budget with a window of 4 and about 90% with 16
 * (bench/rate-limit-saturation.ts).
 */
export const DEFAULT_BATCH_CONCURRENCY = 16;

/** Batches scheduled by one workflow run before it continues as new; keeps history to a few thousand events. */
export const DEFAULT_BATCHES_PER_RUN = 400;

/** Spec section 8: 2 credits per signal returned by enrich. Used only to bound what a batch could cost. */
export const CREDITS_PER_SIGNAL = 2;
/** The largest `limit` the API accepts; the bound used when a job sets none. */
export const MAX_SIGNALS_PER_DOMAIN = 500;
