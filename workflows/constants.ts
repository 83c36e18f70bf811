/** Task queues. API calls run on their own queue, whose server-side rate limit is the account's budget. */
export const DEFAULT_TASK_QUEUE = 'signal-kit';
export const DEFAULT_API_TASK_QUEUE = 'signal-kit-api';

/** Batches scheduled by one workflow run before it continues as new; keeps history to a few thousand events. */
export const DEFAULT_BATCHES_PER_RUN = 400;

/** Spec section 8: 2 credits per signal returned by enrich. Used only to bound what a batch could cost. */
export const CREDITS_PER_SIGNAL = 2;
/** The largest `limit` the API accepts; the bound used when a job sets none. */
export const MAX_SIGNALS_PER_DOMAIN = 500;
