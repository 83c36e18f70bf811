/**
 * The Signal Data Service's published limits (spec section 8), in one place.
 * The client checks these before sending anything; the workflows use them to size batches.
 */

/** Requests per minute per account, shared by all keys of the account. */
export const RATE_LIMIT_PER_MINUTE = 300;

/** `limit` of an enrich call: signals returned per call (per domain in the bulk form). */
export const MAX_SIGNALS_PER_CALL = 500;

/** Entries in `signal_subtypes`. */
export const MAX_SIGNAL_SUBTYPES = 25;

/** Domains in one `POST /v1/companies/enrich/bulk`. */
export const MAX_BULK_ENRICH_DOMAINS = 100;

/**
 * Contacts in one batch of a contacts sync (`--kind enrich-contacts`): a call each, about 4 s of calls at 300 a
 * minute. The plan packs its batches by it and the workflow bounds a batch's worst-case cost by it.
 */
export const CONTACT_BATCH = 20;

/** Addresses in one `POST /v1/emails/verify/bulk`. */
export const MAX_BULK_VERIFY_EMAILS = 1000;

/** Topic ids are `b2b_<number>`. */
export const TOPIC_ID_PATTERN = /^b2b_\d+$/;

/** Credit prices stated by the spec (section 8). The buyer-intent export's flat rate is not stated. */
export const CREDITS = {
  perEnrichedSignal: 2,
  perVerifiedEmail: 1,
  perBuyerIntentContact: 1,
  perWebhookEvent: 1,
  signalLookup: 0,
  webhookManagement: 0,
} as const;

/**
 * The kit's own ceiling on a server's `Retry-After` (1 minute). A delay asked for by the API (429/503, also before a
 * download) or by a webhook destination is honoured up to this and no further: a hostile or broken server asking for
 * 10^9 seconds or a date in year 9999 must not park a batch for decades or stretch the webhook delivery schedule.
 * It is also the maximum interval of the API activities' retry policy (workflows/activity-options.ts), so a capped
 * delay is never longer than Temporal's own backoff would be.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The most bytes the client reads of one JSON answer (or error body) before giving up with a NetworkError
 * (`answer_too_large`). The largest legitimate answer, a bulk enrich of 100 domains at 500 signals each, is well
 * under this; a runaway or hostile answer must not fill a worker that runs 16 calls at once.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** A server's delay in milliseconds, capped at MAX_RETRY_AFTER_MS. */
export function capRetryAfter(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

export const LIMITS = {
  rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
  signalsPerCall: MAX_SIGNALS_PER_CALL,
  signalSubtypes: MAX_SIGNAL_SUBTYPES,
  bulkEnrichDomains: MAX_BULK_ENRICH_DOMAINS,
  bulkVerifyEmails: MAX_BULK_VERIFY_EMAILS,
} as const;
