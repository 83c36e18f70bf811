/**
 * Fault drill: a worker stalls (SIGSTOP) with paid calls in flight, for longer than the heartbeat timeout, then goes on
 * (SIGCONT), as a paused VM does. Temporal gives the stalled batches to another worker, which pays for them again,
 * while the stalled attempts still wait for the answers of the calls they sent (charged by the service, slow to
 * arrive): those answers arrive only once the job is finalizing. An attempt cancelled after its call was sent still
 * reads the answer and writes its credits into its lost-answer marker, and finalize waits for markers younger than the
 * request timeout to settle, so the manifest says exactly what the sandbox charged: the ledger equals
 * `credits_charged`, the spec's price of the saved lines plus the lost answers' credits, and `unknown_calls` is at
 * most the calls that were in flight at the stall (at most `--concurrency`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { type ChildWorker, startChildWorker } from '../../testkit/cli-process.ts';
import { type DrillInput, removeTempDirs, tempDir, writeDomainsCsv } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { batchIndex, checkJobOutput } from '../../testkit/job-output.ts';
import { maxAttempt, until } from '../../testkit/kill-drill.ts';
import { apiRateLimiterId } from '../../workflows/api-rate-limiter.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { untilFinalizing } from './finalizing.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const LIMIT = 2;
const CONCURRENCY = 4;
const HEARTBEAT_TIMEOUT_MS = 3_000;

describe('drill: a worker stalled past its heartbeat timeout, then resumed', () => {
  let env: JobEnv;
  let proxy: ApiProxy;
  let dir: string;
  let input: DrillInput;
  const workers: ChildWorker[] = [];

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 29, clock: () => CLOCK, faults: { latencyMs: 150 } } });
    proxy = await startApiProxy(env.sandbox.url);
    dir = await tempDir('stall');
    input = await writeDomainsCsv(dir, 'crm.csv', { distinct: 1_200, seed: 71 });
  });
  afterAll(async () => {
    for (const worker of workers) {
      try {
        process.kill(-worker.pid, 'SIGCONT');
      } catch {}
    }
    await Promise.allSettled(workers.map((worker) => worker.kill()));
    await proxy?.stop();
    await env?.stop();
    await removeTempDirs();
  });

  it('SIGSTOP with charged answers on their way, SIGCONT after another worker redid them, the answers arriving while the job finalizes: the manifest says exactly what was charged', async () => {
    const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url });
    const stalled = await startChildWorker(workerEnv);
    workers.push(stalled);
    const jobId = 'stall-drill';
    const output = pathToFileURL(join(dir, 'out')).href;
    const c = env.config();
    const before = env.sandbox.ledger.total();
    const firstCall = proxy.calls.length;
    const jobInput: BulkEnrichInput = {
      jobId,
      input: input.url,
      output,
      options: { limit: LIMIT },
      concurrency: CONCURRENCY,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      taskQueue: c.taskQueue,
      apiTaskQueue: c.apiTaskQueue,
    };
    const handle = await env.client.workflow.start('bulkEnrich', {
      workflowId: jobId,
      taskQueue: c.taskQueue,
      workflowTaskTimeout: 3_000,
      args: [jobInput],
    });
    const jobCalls = () => proxy.calls.slice(firstCall).filter((call) => call.domains);
    const answered = () => jobCalls().filter((call) => call.status === 200 && call.answeredAt);
    await until('two answered calls', () => answered().length >= 2, 60_000, 5);
    // Read while the job runs: a completed job removes its batch files.
    await until('the input to be prepared', () => existsSync(join(dir, 'out', jobId, 'work', '_prepared.json')));
    const batchOf = await batchIndex(output, jobId);

    // Calls reach the sandbox (which charges them) but their answers wait: the worker stalls with them on the way.
    proxy.holdAnswers();
    await until('a charged answer on its way', () => proxy.heldAnswers() >= 1, 30_000, 5);
    await sleep(100);
    process.kill(-stalled.pid, 'SIGSTOP');
    const onTheirWay = jobCalls().filter((call) => !call.answeredAt);
    const inFlightAtStall = onTheirWay.length;
    // Their answers stay on their way (a slow network, a slow service); the calls of the other worker pass.
    proxy.stopHolding();

    // Another worker takes the batches over once their heartbeats lapse, and pays for them again.
    const rescuer = await startChildWorker(workerEnv);
    workers.push(rescuer);
    const namespace = c.namespace;
    await Promise.allSettled(
      [jobId, apiRateLimiterId(c.apiTaskQueue)].map((workflowId) =>
        env.client.workflowService.resetStickyTaskQueue({ namespace, execution: { workflowId } }),
      ),
    );
    const askedAgain = (held: (typeof onTheirWay)[number]) =>
      jobCalls().some((call) => call.seq > held.seq && call.domains![0] === held.domains![0]);
    await until('the stalled batches to be asked again', () => onTheirWay.every(askedAgain), 60_000, 10);
    // The stalled worker goes on: its attempts learn that Temporal timed them out, and keep waiting for the answers
    // of the calls they sent (the service charged them).
    process.kill(-stalled.pid, 'SIGCONT');

    // The answers arrive only once the job has every batch saved by the other worker and is finalizing.
    const batches = new Set(batchOf.values()).size;
    const endedBeforeAnswers = await untilFinalizing(env.client, jobId, { dir: join(dir, 'out'), batches });
    const answersHeldMs = Date.now() - onTheirWay[0]!.startedAt;
    proxy.releaseAnswers();

    const result = (await handle.result()) as JobResult;
    const charged = env.sandbox.ledger.total() - before;
    const paid = new Map<number, number>();
    for (const call of answered()) {
      const batch = batchOf.get(call.domains![0]!)!;
      if (call.credits > 0) paid.set(batch, (paid.get(batch) ?? 0) + 1);
    }
    const paidTwice = [...paid].filter(([, n]) => n > 1).length;
    const lost = result.unsavedAnswers ?? { credits: 0, unknown_calls: 0 };
    const record = proxy.calls.slice(firstCall).reduce((sum, call) => sum + call.credits, 0);
    console.log(
      `stalled-worker drill: ${inFlightAtStall} calls in flight at the stall, ${paidTwice} batches paid twice, ` +
        `charged ${charged} (call record ${record}), manifest ${result.credits} (${JSON.stringify(lost)}), ` +
        `answers held ${answersHeldMs} ms, the job had ended before them: ${endedBeforeAnswers}`,
    );

    expect(result.status).toBe('completed');
    const drilled = await checkJobOutput(output, jobId, input);
    const ideal = enrichTruthCredits(env.sandbox, input, drilled.lines, LIMIT);
    // The drill did what it says: a later attempt ran while the stalled one held charged answers.
    expect(await maxAttempt(env.client, jobId, 'enrichBatch')).toBeGreaterThanOrEqual(2);
    expect(paidTwice).toBeGreaterThanOrEqual(1);
    expect(inFlightAtStall).toBeGreaterThanOrEqual(1);
    expect(inFlightAtStall).toBeLessThanOrEqual(CONCURRENCY);
    // The sandbox's ledger and the proxy's record of the calls agree on what was charged.
    expect(record).toBe(charged);
    // Exactly what was charged: the saved lines at the spec's price plus the answers paid for and lost.
    expect(charged).toBe(ideal + lost.credits);
    expect(result.credits).toBe(charged);
    expect(lost.unknown_calls).toBeLessThanOrEqual(inFlightAtStall);
  }, 150_000);
});
