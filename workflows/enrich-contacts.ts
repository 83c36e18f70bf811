import { continueAsNew } from '@temporalio/workflow';
import type { ContactOptions } from '../activities/jobs/enrich-contacts.ts';
import { CREDITS, MAX_SIGNALS_PER_CALL } from '../connectors/signal-api/limits.ts';
import { batchApiActivities, perItemSingles, runBatchJob, type SignalJobInput } from './batch-job.ts';
import type { JobResult } from './job-progress.ts';

export type EnrichContactsInput = SignalJobInput<ContactOptions>;

/**
 * Batches of contacts in flight at once when the job does not say (`--concurrency`). A batch sends its contacts one
 * after another, each waiting for its slot of the account's rate limit, so this is the number of call streams: enough
 * to keep the limit busy at a few hundred ms per call, and few enough that a batch of 20 still ends well inside the
 * activity's 2-minute limit while another job shares the account (16 streams took over 2 minutes: the batches timed
 * out and the calls in flight were sent again, bench/README.md).
 */
export const CONTACT_STREAMS = 8;

/**
 * Enriches every row of a contact export that names a person (by email, else LinkedIn profile URL): one paced
 * `POST /v1/contacts/enrich` per distinct contact, on the single-call machinery of company rows without a domain
 * (batch files, the account's limiter, budget, lost-answer markers, part writer, manifest), into
 * `<output>/<jobId>/parts/`, one line per input row. The spec has no bulk form, so there are no bulk batches.
 */
export async function enrichContacts(input: EnrichContactsInput): Promise<JobResult> {
  const api = batchApiActivities(input);
  const options = input.options ?? {};
  const perContact = (options.limit ?? MAX_SIGNALS_PER_CALL) * CREDITS.perEnrichedSignal;
  const singles = perItemSingles(api.enrichContactsBatch, options);
  return runBatchJob(
    { ...input, concurrency: input.concurrency ?? CONTACT_STREAMS },
    {
      kind: 'enrich-contacts',
      options: { ...options },
      batchSize: 1,
      maxCredits: input.maxCredits,
      // Every row is a single: the bulk window has no batches (a contact's employer is not enriched again).
      runBatch: (job, index) => singles.run(job, index),
      singles,
      foldSingles: false,
      worstCaseCredits: (size) => size * perContact,
      details: { options },
      continueAsNew: (carried) => continueAsNew<typeof enrichContacts>({ ...input, carried }),
    },
  );
}
