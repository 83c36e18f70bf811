import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type BatchItem, recordFields } from './batch-file.ts';
import { type EnrichOptions, worstCaseCreditsPerDomain } from './enrich.ts';
import { answerSingleBatch, itemRefusal, type SingleAnswer } from './single-calls.ts';
import type { BatchResult, JobRef } from './types.ts';

export interface EnrichSingleBatchRequest {
  job: JobRef;
  index: number;
  options: EnrichOptions;
  creditCap?: number;
}

/**
 * Enriches single batch `index` (rows identified by a LinkedIn company URL or a company name, no domain) with one
 * `POST /v1/companies/enrich` per row, paced by the account's limiter like every call, into `parts/single-N`. Each
 * line says `matched_by` and the domain the service resolved; a company the service does not know is `not_found`
 * (free).
 */
export async function enrichSingleBatch(
  client: SignalClient,
  store: Store,
  request: EnrichSingleBatchRequest,
): Promise<BatchResult> {
  const { options } = request;
  return answerSingleBatch(
    store,
    {
      job: request.job,
      index: request.index,
      ...(request.creditCap !== undefined ? { creditCap: request.creditCap } : {}),
      worstCasePerItem: worstCaseCreditsPerDomain(options),
    },
    (item) => enrichOne(client, item, options),
  );
}

async function enrichOne(client: SignalClient, item: BatchItem, options: EnrichOptions): Promise<SingleAnswer> {
  const matchedBy = item.m === 'linkedin_url' ? 'linkedin_url' : 'company_name';
  const head = { row: item.row, ...recordFields(item), matched_by: matchedBy, input: item.raw };
  const identifier =
    matchedBy === 'linkedin_url' ? { linkedin_url: item.s ?? item.raw } : { company_name: item.s ?? item.raw };
  try {
    const { credits, company, signals, signal_summary, coverage } = await client.enrichCompany({
      ...identifier,
      ...options,
    });
    const domain = typeof company.domain === 'string' && company.domain !== '' ? company.domain.toLowerCase() : null;
    return {
      credits,
      line: { domain, status: 'ok', ...head, company, signals, signal_summary, ...(coverage ? { coverage } : {}) },
    };
  } catch (error) {
    const refusal = itemRefusal(error);
    if (!refusal) throw error;
    if (refusal.notFound) return { credits: 0, line: { domain: null, status: 'not_found', ...head } };
    return {
      credits: 0,
      line: { domain: null, status: 'error', ...head, error: { code: refusal.code, message: refusal.message } },
    };
  }
}
