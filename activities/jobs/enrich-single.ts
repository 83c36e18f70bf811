import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { CallOptions } from '../../connectors/signal-api/types.ts';
import { type BatchItem, recordFields } from './batch-file.ts';
import { type EnrichOptions, worstCaseCreditsPerDomain } from './enrich.ts';
import { type PerItemBatchRequest, perItemBatchActivity, resolvedDomain, type SingleAnswer } from './single-calls.ts';

export type EnrichSingleBatchRequest = PerItemBatchRequest<EnrichOptions>;

/**
 * Enriches single batch `index` (rows identified by a LinkedIn company URL or a company name, no domain) with one
 * `POST /v1/companies/enrich` per row, paced by the account's limiter like every call, into `parts/single-N`. Each
 * line says `matched_by` and the domain the service resolved; a company the service does not know is `not_found`
 * (free).
 */
export const enrichSingleBatch = perItemBatchActivity(worstCaseCreditsPerDomain, headOf, enrichOne);

function headOf(item: BatchItem) {
  const matchedBy = item.m === 'linkedin_url' ? 'linkedin_url' : 'company_name';
  return { row: item.row, ...recordFields(item), matched_by: matchedBy, input: item.raw };
}

async function enrichOne(
  client: SignalClient,
  item: BatchItem,
  options: EnrichOptions,
  call: CallOptions,
): Promise<SingleAnswer> {
  const head = headOf(item);
  const value = item.s ?? item.raw;
  const identifier = head.matched_by === 'linkedin_url' ? { linkedin_url: value } : { company_name: value };
  const { credits, company, signals, signal_summary, coverage } = await client.enrichCompany(
    { ...identifier, ...options },
    call,
  );
  const domain = resolvedDomain(company);
  return {
    credits,
    line: { domain, status: 'ok', ...head, company, signals, signal_summary, ...(coverage ? { coverage } : {}) },
  };
}
