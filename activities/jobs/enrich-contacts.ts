import { CREDITS, MAX_SIGNALS_PER_CALL } from '../../connectors/signal-api/limits.ts';
import { matchedByOf } from './batch-file.ts';
import { type ItemCall, type PerItemBatchRequest, perItemBatchActivity } from './single-calls.ts';

/** Filters applied to every contact of a job (spec 4.3 field names). */
export interface ContactOptions {
  signal_types?: string[];
  /** ISO 8601. */
  detected_after?: string;
  /** Person-level signals per contact. */
  limit?: number;
}

export type EnrichContactsBatchRequest = PerItemBatchRequest<ContactOptions>;

/** The most one contact can cost: 2 credits per person-level signal returned, at most `limit` (500) of them. */
export function worstCaseCreditsPerContact(options: ContactOptions): number {
  return (options.limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
}

/** One `POST /v1/contacts/enrich` for the contact's email, else its LinkedIn profile URL. */
const enrichOne: ItemCall<ContactOptions> = async (client, item, by, options, call) => {
  const value = item.s ?? item.v;
  const identifier = by === 'linkedin_url' ? { contact_linkedin_url: value } : { contact_email: value };
  const answer = await client.enrichContact({ ...identifier, ...options }, call);
  return {
    credits: answer.credits,
    fields: {
      contact: answer.contact,
      company: answer.company,
      signals: answer.contact_signals,
      signal_summary: answer.signal_summary,
      ...(answer.total !== undefined ? { total: answer.total } : {}),
      ...(answer.coverage ? { coverage: answer.coverage } : {}),
    },
  };
};

/**
 * Enriches contact batch `index` with one `POST /v1/contacts/enrich` per distinct contact (by email, else LinkedIn
 * profile URL), each paced by the account's limiter, on the single-call machinery shared with company rows without a
 * domain (its batch files, paid-call markers, budget cap and part writer). A line holds the contact, the employer
 * the service resolved, and the person-level signals; a contact the service does not know is `not_found` (free).
 */
export const enrichContactsBatch = perItemBatchActivity(worstCaseCreditsPerContact, matchedByOf, enrichOne);
