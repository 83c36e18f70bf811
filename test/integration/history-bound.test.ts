import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { DEFAULT_BATCHES_PER_RUN } from '../../workflows/constants.ts';

/** Batches per workflow run before continue-as-new (the production default). */
const BATCHES_PER_RUN = DEFAULT_BATCHES_PER_RUN;
/**
 * Two full runs at the production default and a third holding the last batch: enough to show that every run after a
 * continue-as-new starts from an empty history, that the size of the input only adds runs (not events per run) and
 * that the last batch gets a run of its own. How fast a job of a million domains goes is a benchmark's business, not
 * the suite's.
 */
const DOMAINS = (2 * BATCHES_PER_RUN + 1) * 100;
const MAX_EVENTS_PER_RUN = 4_000;

describe(`history stays bounded whatever the input size (${DOMAINS} domains, three runs of up to ${BATCHES_PER_RUN} batches)`, () => {
  let env: JobEnv;
  let input: string;
  let dir: string;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 3 } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-history-'));
    const file = join(dir, 'domains.csv');
    const out = createWriteStream(file);
    out.write('domain\n');
    for (let i = 0; i < DOMAINS; i++) {
      if (!out.write(`company-${i}.example.com\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    input = pathToFileURL(file).href;
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('runs every batch, continues as new, and no run holds more than a few thousand events', {
    timeout: 300_000,
  }, async () => {
    const c = env.config();
    const jobId = 'history-bound';
    const handle = await env.client.workflow.start('bulkEnrich', {
      workflowId: jobId,
      taskQueue: c.taskQueue,
      args: [
        {
          jobId,
          input,
          output: pathToFileURL(join(dir, 'out')).href,
          // Only a type these synthetic companies rarely have: the test is about orchestration, not payload size.
          options: { limit: 1, signal_types: ['sec-20f'] },
          concurrency: 16,
          batchesPerRun: BATCHES_PER_RUN,
          taskQueue: c.taskQueue,
          apiTaskQueue: c.apiTaskQueue,
        } satisfies BulkEnrichInput,
      ],
    });
    const result = (await handle.result()) as JobResult;
    expect(result.status).toBe('completed');
    expect(result.counts.distinct).toBe(DOMAINS);
    expect(result.counts.ok + result.counts.not_found + result.counts.error).toBe(DOMAINS);
    expect(result.parts).toBe(DOMAINS / 100);

    const runs: number[] = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${jobId}'` })) {
      runs.push(execution.historyLength);
    }
    console.log(`history-bound: ${runs.length} runs of ${JSON.stringify(runs)} events`);
    // One run per BATCHES_PER_RUN batches started: two full ones and the last batch's.
    expect(runs.length).toBe(3);
    for (const events of runs) expect(events).toBeLessThanOrEqual(MAX_EVENTS_PER_RUN);

    // API calls do not wait for the whole input: the first window of batches was under way before it was prepared.
    const first = await env.client.workflow.getHandle(jobId, handle.firstExecutionRunId).fetchHistory();
    const scheduled = new Map<string, string>();
    let firstBatch: number | undefined;
    let prepared: number | undefined;
    for (const event of first.events ?? []) {
      const id = Number(event.eventId);
      const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type) scheduled.set(String(id), type);
      if (type === 'enrichBatch') firstBatch ??= id;
      const done = event.activityTaskCompletedEventAttributes;
      if (done && scheduled.get(String(done.scheduledEventId)) === 'prepareInput') prepared = id;
    }
    expect(firstBatch).toBeDefined();
    expect(prepared).toBeDefined();
    expect(firstBatch!).toBeLessThan(prepared!);
  });
});
