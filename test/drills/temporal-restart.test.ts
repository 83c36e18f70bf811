/**
 * Fault drill: the Temporal dev server is stopped and started again (its SQLite file kept) in the middle of a bulk
 * enrichment started with `signal-kit enrich --wait` (issue 6). The worker (in this process) must reconnect by itself,
 * the command follow the job across the outage and exit 0, and the job complete with every input accounted for exactly
 * once, every part intact, and the ledger equal to what the spec charges for the signals the sandbox holds. Killed for
 * longer (24 s), `--wait` must still follow the job: it retries while Temporal is unreachable (`TEMPORAL_OUTAGE_LIMIT_MS`).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { runCli } from '../../testkit/cli-process.ts';
import { checkJobOutput } from '../../testkit/job-output.ts';
import { maxAttempt, until } from '../../testkit/kill-drill.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { untilFinalizing } from './drill-job.ts';
import { useProxiedDrill } from './proxied-drill.ts';

const CLOCK = SANDBOX_EPOCH_MS + 200 * 86_400_000;
const CONCURRENCY = 4;
/** 4,000 distinct domains in batches of 100. */
const BATCHES = 40;

describe('drill: the Temporal server restarted in the middle of a job', () => {
  const drill = useProxiedDrill({
    label: 'temporal',
    // Its own server: the drill stops and kills it.
    env: { ownTemporal: true, sandbox: { seed: 17, clock: () => CLOCK, faults: { latencyMs: 100 } } },
    csv: { distinct: 4_000, seed: 53 },
    // A request timeout the answers held across the outage (about 40 s) arrive within, also on a loaded machine.
    worker: { timeoutMs: 90_000 },
  });

  it.each([
    ['stopped (SIGTERM)', false],
    ['killed (SIGKILL)', true],
  ])(
    'server %s and started again: the worker reconnects, `enrich --wait` exits 0',
    async (_how, hard) => {
      const { env, proxy, dir, input } = drill;
      const output = pathToFileURL(join(dir, 'out')).href;
      const suffix = hard ? 'hard' : 'soft';
      const jobId = `temporal-drill-${suffix}`;
      const before = env.sandbox.ledger.total();
      const firstCall = proxy.calls.length;
      const answered = () => proxy.calls.slice(firstCall).filter((call) => call.domains && call.answeredAt).length;
      // As a user runs it: the CLI starts the job and follows it to its end across the outage.
      const args = ['enrich', '--input', input.url, '--output', output, '--job-id', jobId, '--limit', '2', '--wait'];
      const cli = runCli([...args, '--concurrency', '4'], env.childEnv(), 90_000);
      await until('a few batches to be done', () => answered() >= 8, 60_000, 5);
      const downAt = Date.now();
      await env.stack.temporal!.restart({ hard, downMs: 3_000 });
      const downMs = Date.now() - downAt;
      const atRestart = answered();

      const exit = await cli;
      const charged = env.sandbox.ledger.total() - before;
      console.log(
        `temporal-restart (${suffix}): down ${downMs} ms after ${atRestart} answers; ` +
          `${charged} credits; CLI exit ${exit.code} after ${exit.ms} ms`,
      );
      expect(exit.timedOut).toBe(false);
      expect(exit.code, exit.stderr).toBe(0);
      const result = JSON.parse(exit.stdout) as JobResult;
      expect(atRestart).toBeLessThan(40); // the restart happened in the middle of the 40 batches
      expect(result.status).toBe('completed');
      const drilled = await checkJobOutput(output, jobId, input);
      // Paid once: what the spec charges for the signals that exist for the distinct domains (the sandbox's truth).
      expect(charged).toBe(enrichTruthCredits(env.sandbox, input, drilled.lines, 2));
      expect(result.credits).toBe(charged);
    },
    120_000,
  );

  it('server killed for longer than the heartbeat timeout, answers arriving while the job finalizes: the manifest says exactly what was charged', async () => {
    const { env, proxy, dir, input } = drill;
    const output = pathToFileURL(join(dir, 'out')).href;
    const jobId = 'temporal-drill-long';
    const before = env.sandbox.ledger.total();
    const firstCall = proxy.calls.length;
    const answered = () => proxy.calls.slice(firstCall).filter((call) => call.domains && call.answeredAt).length;
    // As a user runs it: `--wait` must follow the job across an outage longer than the client's own retries.
    const args = ['enrich', '--input', input.url, '--output', output, '--job-id', jobId, '--limit', '2', '--wait'];
    const cli = runCli([...args, '--concurrency', String(CONCURRENCY)], env.childEnv(), 150_000);
    await until('a few batches to be done', () => answered() >= 8, 60_000, 5);
    // Answers on their way at the kill (charged, held at the proxy as a slow answer would be) ...
    proxy.holdAnswers();
    await until('a charged answer on its way', () => proxy.heldAnswers() >= 1, 30_000, 5);
    const killedAt = Date.now();
    const onTheirWay = proxy.calls.slice(firstCall).filter((call) => call.domains && !call.answeredAt);
    const batchFirst = new Set(onTheirWay.map((call) => call.domains![0]));
    // ... stay on their way until the job finalizes; the calls of the attempts that replace them pass.
    proxy.stopHolding();
    // Down past the activities' heartbeat timeout (10 s): when the server is back it times out the attempts that
    // were running and starts others, while the first ones are still in the worker, waiting for their answer. Down
    // longer than the Temporal client's own retries of a call too (10 attempts, at most about 23 s), so that `--wait`
    // meets the outage itself.
    await env.stack.temporal!.restart({ hard: true, downMs: 24_000 });
    const askedAgain = () =>
      proxy.calls
        .slice(firstCall)
        .some((call) => call.domains && !onTheirWay.includes(call) && batchFirst.has(call.domains[0]!));
    await until('a later attempt to ask a batch again', askedAgain, 30_000, 10);
    // The timed-out attempts' answers arrive while the job finalizes.
    const endedBeforeAnswers = await untilFinalizing(env.client, jobId, { dir: join(dir, 'out'), batches: BATCHES });
    const answersHeldMs = Date.now() - killedAt;
    proxy.releaseAnswers();

    const exit = await cli;
    expect(exit.timedOut).toBe(false);
    expect(exit.code, exit.stderr).toBe(0);
    // The outage was said, once, and not as a failure.
    expect(exit.stderr.match(/Temporal is unreachable/g) ?? [], exit.stderr).toHaveLength(1);
    const result = JSON.parse(exit.stdout) as JobResult;
    const charged = env.sandbox.ledger.total() - before;
    const record = proxy.calls.slice(firstCall).reduce((sum, call) => sum + call.credits, 0);
    const lost = result.unsavedAnswers ?? { credits: 0, unknown_calls: 0 };
    expect(result.status).toBe('completed');
    const drilled = await checkJobOutput(output, jobId, input);
    const ideal = enrichTruthCredits(env.sandbox, input, drilled.lines, 2);
    const paid = new Map<string, number>();
    for (const call of proxy.calls.slice(firstCall)) {
      if (call.domains && call.credits > 0) paid.set(call.domains[0]!, (paid.get(call.domains[0]!) ?? 0) + 1);
    }
    console.log(
      `temporal-restart (long): ${onTheirWay.length} calls in flight at the kill; answers held ${answersHeldMs} ms ` +
        `(the job had ended before them: ${endedBeforeAnswers}); ${charged} credits charged (call record ${record}); ` +
        `manifest ${result.credits} ${JSON.stringify(lost)}`,
    );
    // The drill did what it says: a batch was paid for twice, by two attempts at once.
    expect(await maxAttempt(env.client, jobId, 'enrichBatch')).toBeGreaterThanOrEqual(2);
    expect([...paid.values()].some((n) => n > 1)).toBe(true);
    expect(onTheirWay.length).toBeGreaterThanOrEqual(1);
    expect(onTheirWay.length).toBeLessThanOrEqual(CONCURRENCY);
    // The sandbox's ledger and the proxy's record of the calls agree on what was charged.
    expect(record).toBe(charged);
    // Exactly what was charged: the saved lines at the spec's price plus the answers paid for and lost, which the
    // timed-out attempts read and counted before the job's manifest was written.
    expect(charged).toBe(ideal + lost.credits);
    expect(result.credits).toBe(charged);
    expect(lost.unknown_calls).toBeLessThanOrEqual(onTheirWay.length);
  }, 150_000);
});
