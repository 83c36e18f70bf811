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

export const LIMITS = {
  rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
  signalsPerCall: MAX_SIGNALS_PER_CALL,
  signalSubtypes: MAX_SIGNAL_SUBTYPES,
  bulkEnrichDomains: MAX_BULK_ENRICH_DOMAINS,
  bulkVerifyEmails: MAX_BULK_VERIFY_EMAILS,
} as const;
