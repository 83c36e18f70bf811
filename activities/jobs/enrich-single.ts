import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { CallOptions } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { type BatchItem, recordFields } from './batch-file.ts';
import { type EnrichOptions, worstCaseCreditsPerDomain } from './enrich.ts';
import type { AttemptContext } from './paid-call.ts';
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
  attempt?: AttemptContext,
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
    (item, call) => enrichOne(client, item, options, call),
    refused,
    attempt,
  );
}

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
  const domain = typeof company.domain === 'string' && company.domain !== '' ? company.domain.toLowerCase() : null;
  return {
    credits,
    line: { domain, status: 'ok', ...head, company, signals, signal_summary, ...(coverage ? { coverage } : {}) },
  };
}

/** A company the service does not know is `not_found`, a request it refuses an `error` line; both free. */
function refused(item: BatchItem, error: unknown): SingleAnswer | undefined {
  const refusal = itemRefusal(error);
  if (!refusal) return undefined;
  const head = headOf(item);
  if (refusal.notFound) return { credits: 0, line: { domain: null, status: 'not_found', ...head } };
  return {
    credits: 0,
    line: { domain: null, status: 'error', ...head, error: { code: refusal.code, message: refusal.message } },
  };
}
