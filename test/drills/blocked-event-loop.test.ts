/**
 * Fault drill: one very large answer holds a worker's event loop past the heartbeat timeout (issue 18: "an answer
 * that blocks the event loop"). Two `signal-kit worker` processes serve the job; the sandbox pads one answer to 8 MiB
 * (`answerPaddingBytes`: valid, its extra field ignored) and the workers parse JSON as a slow machine would
 * (test/drills/slow-parse.ts: 2 s per MiB), so the worker that gets it stops for about 16 s: no heartbeat, no timer,
 * no other activity of that process runs, while its Temporal threads go on. Temporal times out its attempts and the
 * other worker pays for those batches again; when the loop is free, the blocked attempts go on with answers the
 * service charged. Every charge must be in the manifest, exactly: the ledger equals `credits_charged`, the spec's price
 * of the saved lines plus the lost answers' credits, and `unknown_calls` is at most the calls in flight
 * (`--concurrency`).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { startChildWorker } from '../../testkit/cli-process.ts';
import { checkJobOutput } from '../../testkit/job-output.ts';
import { forgetStickyQueues, maxAttempt, until } from '../../testkit/kill-drill.ts';
import { apiRateLimiterId } from '../../workflows/rate-limiter.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { useChildWorkerDrill } from './drill-job.ts';

const CLOCK = SANDBOX_EPOCH_MS + 150 * 86_400_000;
const LIMIT = 2;
const CONCURRENCY = 4;
const HEARTBEAT_TIMEOUT_MS = 3_000;
const BULK = '/v1/companies/enrich/bulk';
const PADDED_BYTES = 8 * 1024 * 1024;
/** How long the workers take to parse a MiB of JSON: the padded answer holds its worker's loop about 30 s. */
const PARSE_MS_PER_MIB = 3_750;
const SLOW_PARSE = pathToFileURL(fileURLToPath(new URL('./slow-parse.ts', import.meta.url))).href;

describe('drill: an answer that blocks the event loop past the heartbeat timeout', () => {
  const drill = useChildWorkerDrill('blocked-loop', { seed: 37, clockMs: CLOCK, distinct: 2_000, csvSeed: 83 });

  it('one 8 MiB answer holds a worker for 30 s; another worker carries the job on: the manifest says exactly what was charged', async () => {
    const { env, proxy, input, workers } = drill;
    const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url });
    // The worker that gets the large answer parses slowly; it serves the job alone until then.
    const blocked = await startChildWorker({
      ...workerEnv,
      NODE_OPTIONS: `${workerEnv['NODE_OPTIONS'] ?? ''} --import=${SLOW_PARSE}`.trim(),
      SIGNAL_KIT_DRILL_PARSE_MS_PER_MIB: String(PARSE_MS_PER_MIB),
    });
    workers.push(blocked);
    const jobId = 'blocked-loop-drill';
    const job = await drill.startJob(jobId, {
      limit: LIMIT,
      concurrency: CONCURRENCY,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
    });
    const jobCalls = job.calls;
    await until('a few answered calls', () => jobCalls().filter((call) => call.answeredAt).length >= 4, 60_000, 5);
    // The next answer is very large, and takes its worker 30 s to parse.
    env.sandbox.setFaults({
      latencyMs: 150,
      answerPaddingBytes: PADDED_BYTES,
      answerPaddingPaths: [BULK],
      answerPaddingMax: 1,
    });
    const paddedSent = () =>
      env.sandbox.truth.calls({ after: job.mark, path: BULK }).some((call) => call.fault === 'padded');
    await until('the large answer to be sent', paddedSent, 30_000, 10);
    // Another worker (parsing at a normal speed) takes over what the blocked one holds once its heartbeats lapse.
    const other = await startChildWorker(workerEnv);
    workers.push(other);
    await forgetStickyQueues(env, [jobId, apiRateLimiterId(env.config().apiTaskQueue)]);

    const result = (await job.handle.result()) as JobResult;
    const charged = job.charged();
    const record = jobCalls().reduce((sum, call) => sum + call.credits, 0);
    const lost = result.unsavedAnswers ?? { credits: 0, unknown_calls: 0 };
    const padded = env.sandbox.truth.calls({ after: job.mark, path: BULK }).filter((call) => call.fault === 'padded');
    const paddedCall = jobCalls().find((call) => call.requestId === padded[0]?.requestId);
    const paid = new Map<string, number>();
    for (const call of jobCalls()) {
      if (call.credits > 0) paid.set(call.domains![0]!, (paid.get(call.domains![0]!) ?? 0) + 1);
    }
    const paidTwice = [...paid.values()].filter((n) => n > 1).length;
    console.log(
      `blocked-event-loop drill: ${padded.length} padded answer, ${paidTwice} batches paid twice; ` +
        `charged ${charged} (call record ${record}), manifest ${result.credits} (${JSON.stringify(lost)})`,
    );

    expect(result.status).toBe('completed');
    const drilled = await checkJobOutput(job.output, jobId, input);
    const ideal = enrichTruthCredits(env.sandbox, input, drilled.lines, LIMIT);
    // The drill did what it says: the padded answer was charged and sent, and the blocked worker's attempts timed out.
    expect(padded).toHaveLength(1);
    expect(padded[0]!.status).toBe(200);
    expect(paddedCall).toBeDefined();
    expect(await maxAttempt(env.client, jobId, 'enrichBatch')).toBeGreaterThanOrEqual(2);
    // The sandbox's ledger and the proxy's record of the calls agree on what was charged.
    expect(record).toBe(charged);
    // Exactly what was charged: the saved lines at the spec's price plus the answers paid for and lost.
    expect(charged).toBe(ideal + lost.credits);
    expect(result.credits).toBe(charged);
    expect(lost.unknown_calls).toBeLessThanOrEqual(CONCURRENCY);
  }, 120_000);
});
