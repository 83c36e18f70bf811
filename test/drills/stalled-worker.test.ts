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
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { startChildWorker } from '../../testkit/cli-process.ts';
import { batchIndex, checkJobOutput } from '../../testkit/job-output.ts';
import { forgetStickyQueues, maxAttempt, until } from '../../testkit/kill-drill.ts';
import { apiRateLimiterId } from '../../workflows/rate-limiter.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { untilFinalizing, useChildWorkerDrill } from './drill-job.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const LIMIT = 2;
const CONCURRENCY = 4;
const HEARTBEAT_TIMEOUT_MS = 3_000;

describe('drill: a worker stalled past its heartbeat timeout, then resumed', () => {
  const drill = useChildWorkerDrill('stall', { seed: 29, clockMs: CLOCK, distinct: 1_200, csvSeed: 71 });

  it('SIGSTOP with charged answers on their way, SIGCONT after another worker redid them, the answers arriving while the job finalizes: the manifest says exactly what was charged', async () => {
    const { env, proxy, input, workers } = drill;
    // A request timeout the held answers arrive within, however long Temporal takes to give the stalled batches to the
    // other worker on a loaded machine (the stopped worker's outstanding polls take tasks it cannot run).
    const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url, SIGNAL_API_TIMEOUT_MS: '120000' });
    const stalled = await startChildWorker(workerEnv);
    workers.push(stalled);
    const jobId = 'stall-drill';
    const c = env.config();
    const job = await drill.startJob(jobId, {
      limit: LIMIT,
      concurrency: CONCURRENCY,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
    });
    const jobCalls = job.calls;
    const answered = () => jobCalls().filter((call) => call.status === 200 && call.answeredAt);
    await until('two answered calls', () => answered().length >= 2, 60_000, 5);
    // Read while the job runs: a completed job removes its batch files.
    await until('the input to be prepared', () => existsSync(join(job.outputDir, jobId, 'work', '_prepared.json')));
    const batchOf = await batchIndex(job.output, jobId);

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
    await forgetStickyQueues(env, [jobId, apiRateLimiterId(c.apiTaskQueue)]);
    const askedAgain = (held: (typeof onTheirWay)[number]) =>
      jobCalls().some((call) => call.seq > held.seq && call.domains![0] === held.domains![0]);
    await until('the stalled batches to be asked again', () => onTheirWay.every(askedAgain), 100_000, 10);
    // The stalled worker goes on: its attempts learn that Temporal timed them out, and keep waiting for the answers
    // of the calls they sent (the service charged them).
    process.kill(-stalled.pid, 'SIGCONT');

    // The answers arrive only once the job has every batch saved by the other worker and is finalizing.
    const batches = new Set(batchOf.values()).size;
    const endedBeforeAnswers = await untilFinalizing(env.client, jobId, { dir: job.outputDir, batches });
    const answersHeldMs = Date.now() - onTheirWay[0]!.startedAt;
    proxy.releaseAnswers();

    const result = (await job.handle.result()) as JobResult;
    const charged = job.charged();
    const paid = new Map<number, number>();
    for (const call of answered()) {
      const batch = batchOf.get(call.domains![0]!)!;
      if (call.credits > 0) paid.set(batch, (paid.get(batch) ?? 0) + 1);
    }
    const paidTwice = [...paid].filter(([, n]) => n > 1).length;
    const lost = result.unsavedAnswers ?? { credits: 0, unknown_calls: 0 };
    const record = jobCalls().reduce((sum, call) => sum + call.credits, 0);
    console.log(
      `stalled-worker drill: ${inFlightAtStall} calls in flight at the stall, ${paidTwice} batches paid twice, ` +
        `charged ${charged} (call record ${record}), manifest ${result.credits} (${JSON.stringify(lost)}), ` +
        `answers held ${answersHeldMs} ms, the job had ended before them: ${endedBeforeAnswers}`,
    );

    expect(result.status).toBe('completed');
    const drilled = await checkJobOutput(job.output, jobId, input);
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
  }, 240_000);
});
