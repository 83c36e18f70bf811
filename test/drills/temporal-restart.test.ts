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
import { useProxiedDrill } from './proxied-drill.ts';

const CLOCK = SANDBOX_EPOCH_MS + 200 * 86_400_000;
const CONCURRENCY = 4;
/** One bulk call's worst case: 100 domains × `--limit` 2 × 2 credits. */
const WORST_CALL = 100 * 2 * 2;

describe('drill: the Temporal server restarted in the middle of a job', () => {
  const drill = useProxiedDrill({
    label: 'temporal',
    // Its own server: the drill stops and kills it.
    env: { ownTemporal: true, sandbox: { seed: 17, clock: () => CLOCK, faults: { latencyMs: 100 } } },
    csv: { distinct: 4_000, seed: 53 },
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

  it('server killed for longer than the heartbeat timeout: every attempt it restarts is paid once or counted', async () => {
    const { env, proxy, dir, input } = drill;
    const output = pathToFileURL(join(dir, 'out')).href;
    const jobId = 'temporal-drill-long';
    const before = env.sandbox.ledger.total();
    const firstCall = proxy.calls.length;
    const answered = () => proxy.calls.slice(firstCall).filter((call) => call.domains && call.answeredAt).length;
    // As a user runs it: `--wait` must follow the job across an outage longer than the client's own retries.
    const args = ['enrich', '--input', input.url, '--output', output, '--job-id', jobId, '--limit', '2', '--wait'];
    const cli = runCli([...args, '--concurrency', String(CONCURRENCY)], env.childEnv(), 120_000);
    await until('a few batches to be done', () => answered() >= 8, 60_000, 5);
    // Answers on their way at the kill (charged, held at the proxy as a slow answer would be) ...
    proxy.holdAnswers();
    await until('a charged answer on its way', () => proxy.heldAnswers() >= 1, 30_000, 5);
    const onTheirWay = proxy.calls
      .slice(firstCall)
      .filter((call) => call.domains && !call.answeredAt)
      .map((call) => call.seq);
    const batchFirst = new Set(onTheirWay.map((seq) => proxy.calls.find((call) => call.seq === seq)!.domains![0]));
    // ... and down past the activities' heartbeat timeout (10 s): when the server is back it times out the attempts
    // that were running and starts others, while the first ones are still in the worker, waiting for their answer.
    // Down longer than the Temporal client's own retries of a call too (10 attempts, at most about 23 s), so that
    // `--wait` meets the outage itself.
    const killedAt = Date.now();
    await env.stack.temporal!.restart({ hard: true, downMs: 24_000 });
    const askedAgain = () =>
      proxy.calls
        .slice(firstCall)
        .some((call) => call.domains && !onTheirWay.includes(call.seq) && batchFirst.has(call.domains[0]!));
    await until('a later attempt to ask a batch again', askedAgain, 30_000, 10);
    proxy.releaseAnswers();
    const releasedAt = Date.now();

    const exit = await cli;
    expect(exit.timedOut).toBe(false);
    expect(exit.code, exit.stderr).toBe(0);
    // The outage was said, once, and not as a failure.
    expect(exit.stderr.match(/Temporal is unreachable/g) ?? [], exit.stderr).toHaveLength(1);
    const result = JSON.parse(exit.stdout) as JobResult;
    const charged = env.sandbox.ledger.total() - before;
    const unsaved = result.unsavedAnswers ?? { credits: 0, unknown_calls: 0 };
    expect(result.status).toBe('completed');
    const drilled = await checkJobOutput(output, jobId, input);
    const ideal = enrichTruthCredits(env.sandbox, input, drilled.lines, 2);
    const paid = new Map<string, number>();
    for (const call of proxy.calls.slice(firstCall)) {
      if (call.domains && call.credits > 0) paid.set(call.domains[0]!, (paid.get(call.domains[0]!) ?? 0) + 1);
    }
    // The drill did what it says: a batch was paid for twice, by two attempts at once.
    expect(await maxAttempt(env.client, jobId, 'enrichBatch')).toBeGreaterThanOrEqual(2);
    expect([...paid.values()].some((n) => n > 1)).toBe(true);
    // The saved parts cost the spec's price; any other credit is in the manifest's unsaved answers.
    expect(result.credits).toBe(ideal + unsaved.credits);
    // The calls in flight, from the proxy's record: sent before the answers were let go and not answered before the
    // kill (a stale attempt and the one that replaced it each hold one, so there may be more than --concurrency).
    const inFlight = proxy.calls
      .slice(firstCall)
      .filter((call) => call.domains && call.startedAt <= releasedAt && (call.answeredAt ?? Infinity) >= killedAt);
    console.log(
      `temporal-restart (long): ${inFlight.length} calls in flight; ${charged} credits charged; ` +
        `manifest ${result.credits} ${JSON.stringify(unsaved)}`,
    );
    // The sandbox answered every call: an attempt Temporal timed out meanwhile still reads its answer and counts its
    // credits, so the ledger is the manifest's figure, unless the job finalized while such an attempt was still
    // reading (a loaded machine): then within the calls of unknown cost, at most the calls that were in flight.
    expect(unsaved.unknown_calls).toBeLessThanOrEqual(inFlight.length);
    expect(charged).toBeGreaterThanOrEqual(result.credits);
    expect(charged - result.credits).toBeLessThanOrEqual(unsaved.unknown_calls * WORST_CALL);
    if (unsaved.unknown_calls === 0) expect(charged).toBe(result.credits);
  }, 150_000);
});
