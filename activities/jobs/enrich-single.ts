import type { BatchItem } from './batch-file.ts';
import { type EnrichOptions, worstCaseCreditsPerDomain } from './enrich.ts';
import { type ItemCall, type PerItemBatchRequest, perItemBatchActivity } from './single-calls.ts';

export type EnrichSingleBatchRequest = PerItemBatchRequest<EnrichOptions>;

/** A row without a domain is named by its LinkedIn company page, else by its company name. */
const matchedBy = (item: BatchItem) => (item.m === 'linkedin_url' ? 'linkedin_url' : 'company_name');

/** One `POST /v1/companies/enrich` for the row's LinkedIn URL or name (its normalized form when it has one). */
const enrichOne: ItemCall<EnrichOptions> = async (client, item, by, options, call) => {
  const value = item.s ?? item.raw;
  const identifier = by === 'linkedin_url' ? { linkedin_url: value } : { company_name: value };
  const { credits, company, signals, signal_summary, coverage } = await client.enrichCompany(
    { ...identifier, ...options },
    call,
  );
  return { credits, fields: { company, signals, signal_summary, ...(coverage ? { coverage } : {}) } };
};

/**
 * Enriches single batch `index` (rows identified by a LinkedIn company URL or a company name, no domain) with one
 * `POST /v1/companies/enrich` per row, paced by the account's limiter like every call, into `parts/single-N`. Each
 * line says `matched_by` and the domain the service resolved; a company the service does not know is `not_found`
 * (free).
 */
export const enrichSingleBatch = perItemBatchActivity(worstCaseCreditsPerDomain, matchedBy, enrichOne);
