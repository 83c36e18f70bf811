/** Task queues. API calls run on their own queue; its name also names the account's rate limiter. */
export const DEFAULT_TASK_QUEUE = 'signal-kit';
export const DEFAULT_API_TASK_QUEUE = 'signal-kit-api';

/**
 * Batches in flight at once when a job does not say (its window). API batches wait for a call slot from the
 * account's rate limiter (workflows/rate-limiter.ts), where waiting costs nothing; the window keeps slots asked
 * for while earlier answers are still being parsed and written, so that the budget is not left unused.
 */
export const DEFAULT_BATCH_CONCURRENCY = 16;

/**
 * Batches scheduled by one workflow run before it continues as new; keeps history to a few thousand events (at most
 * six per batch). A run drains its window before it continues, and the slots of the account's rate limit that pass
 * meanwhile are lost (about a second each time), so runs are not made shorter than they need to be.
 */
export const DEFAULT_BATCHES_PER_RUN = 500;
