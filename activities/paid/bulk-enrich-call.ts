import { KitError } from '../../connectors/errors.ts';
import type { SignalClient } from '../../connectors/signal-api/client.ts';
import type { BulkEnrichItem, EnrichCompaniesParams } from '../../connectors/signal-api/types.ts';
import type { Store } from '../../connectors/storage/store.ts';
import type { MarkerFolder } from '../run/unsaved-answers.ts';
import { type AttemptContext, type PaidAnswer, type PaidCallOptions, sendPaidCall } from './paid-call.ts';

/**
 * One bulk enrich call of a scheduled run's batch (a push's, a CRM sync's), sent under its marker in `folder`. A
 * refusal of what the call asked (a bad domain) makes its domains error records and the run goes on; `answered` is
 * then absent (nothing was charged). With `keepCancelledAnswer`, an answer read after the attempt was cancelled comes
 * back with `cancelled` (the caller saves it, then ends cancelled).
 */
export async function sendBulkEnrich(
  client: SignalClient,
  store: Store,
  folder: MarkerFolder,
  index: number,
  attempt: AttemptContext,
  params: EnrichCompaniesParams,
  options: PaidCallOptions = {},
): Promise<{ results: BulkEnrichItem[]; answered?: PaidAnswer; cancelled?: { reason: unknown } }> {
  try {
    const { response, marker, cancelled } = await sendPaidCall(
      store,
      folder,
      index,
      attempt,
      (call) => client.enrichCompanies(params, call),
      options,
    );
    const answered = { marker, credits: response.credits };
    return { results: response.results, answered, ...(cancelled ? { cancelled } : {}) };
  } catch (error) {
    if (!(error instanceof KitError) || !error.rule.perRecord) throw error;
    const code = (error as { code?: string }).code ?? 'request_rejected';
    return {
      results: params.domains.map((domain) => ({ domain, status: 'error', error: { code, message: error.message } })),
    };
  }
}
