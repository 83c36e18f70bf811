/**
 * The kit's enrichment activities called in a plain loop, without Temporal: prepareInput, then enrichBatch with N in
 * flight, then finalizeJob, all in one process with the worker's own client and store. Run next to the worker
 * (A) and the baseline script (B), it splits the gap between them into orchestration (A vs this) and the work each
 * batch does (this vs B).
 *
 *   node bench/lib/activities-loop.ts --input CSV --output URL --url URL --key KEY [--concurrency 8] [--report FILE]
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { enrichBatch } from '../../activities/jobs/enrich.ts';
import { finalizeJob } from '../../activities/jobs/finalize.ts';
import { prepareInput } from '../../activities/jobs/prepare.ts';
import type { JobRef, PreparedInput } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';
import { SignalClient } from '../../connectors/signal-api/client.ts';
import { cachedStoreOpener } from '../../workers/worker.ts';
import { parseEnrichScriptArgs, writeScriptReport } from './script-io.ts';

const values = parseEnrichScriptArgs('activities-loop.ts');
const concurrency = values.concurrency;
const client = new SignalClient({ baseUrl: values.url, apiKey: values.key, retry: false });
const stores = cachedStoreOpener(openStore);
const job: JobRef = { jobId: `loop-${Date.now()}`, kind: 'enrich', output: values.output, compression: 'none' };
const startedAt = new Date().toISOString();

const started = performance.now();
const prepared: PreparedInput = await new MockActivityEnvironment().run(() =>
  prepareInput(stores, { job, input: values.input, batchSize: 100 }),
);
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < prepared.batches) {
      const index = next++;
      await enrichBatch(client, stores(job.output), { job, index, options: {} });
    }
  }),
);
const result = await finalizeJob(stores(job.output), {
  job,
  input: values.input,
  status: 'completed',
  startedAt,
  prepared,
});
const elapsedMs = performance.now() - started;
await client.close();

await writeScriptReport(values.report, {
  jobId: job.jobId,
  domains: prepared.distinct,
  lines: result.counts.lines,
  elapsedMs,
});
