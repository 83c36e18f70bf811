/**
 * Fault drill: the Temporal dev server is stopped and started again (its SQLite file kept) in the middle of a bulk
 * enrichment started with `signal-kit enrich --wait` (issue 6). The worker (in this process) must reconnect by itself,
 * the command follow the job across the outage and exit 0, and the job complete with every input accounted for exactly
 * once, every part intact, and the ledger equal to what the spec charges for the signals the sandbox holds.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { runCli } from '../../bench/lib/cli-process.ts';
import { checkJobOutput } from '../../bench/lib/job-output.ts';
import { until } from '../../bench/lib/kill-drill.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { enrichTruthCredits } from '../helpers/truth-checks.ts';
import { useProxiedDrill } from './proxied-drill.ts';

const CLOCK = SANDBOX_EPOCH_MS + 200 * 86_400_000;

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
});
