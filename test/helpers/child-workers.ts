/** Real `signal-kit worker` processes for a test file, killed after each test with the sandbox's faults cleared. */
import { afterEach, expect } from 'vitest';
import type { CallRecord, Sandbox } from '../../sandbox/index.ts';
import { type ChildWorker, type CliResult, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import type { JobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';

/** Registers the clean-up after each test; returns what starts one more worker against the env. */
export function childWorkers(envOf: () => JobEnv): () => Promise<ChildWorker> {
  const workers: ChildWorker[] = [];
  afterEach(async () => {
    envOf().sandbox.setFaults({});
    await Promise.allSettled(workers.splice(0).map((w) => w.kill()));
  });
  return async () => {
    // A request timeout above the longest answer a test holds (8 s), well below the default 60 s: a job whose worker
    // was killed during a call finalizes up to that long later, waiting for the answer the dead worker never settles.
    const w = await startChildWorker(envOf().childEnv({ SIGNAL_API_TIMEOUT_MS: '20000' }));
    workers.push(w);
    return w;
  };
}

export interface PaidKillDrill {
  /** The CLI command, `--wait` included. */
  args: string[];
  /** The answers the sandbox holds after charging them, `holdMs` long. */
  path: string;
  holdMs: number;
  timeoutMs: number;
  /** Clear the sandbox's faults before the second worker starts (otherwise they stay for the caller to clear). */
  clearFaults: boolean;
}

/**
 * Runs a CLI job while its worker is SIGKILLed with a paid answer on its way: once the sandbox has charged a call on
 * `path` (and holds its answer), the worker is killed and another started. Returns the CLI's result and the ledger's
 * length before the job (its entries from there on are the job's).
 */
export async function killWorkerWhilePaid(
  env: JobEnv,
  worker: () => Promise<ChildWorker>,
  drill: PaidKillDrill,
): Promise<{ done: CliResult; ledger0: number }> {
  const ledger0 = env.sandbox.ledger.entries.length;
  env.sandbox.setFaults({ answerDelayMs: drill.holdMs, answerDelayPaths: [drill.path] });
  const first = await worker();
  const cli = runCli(drill.args, env.childEnv(), drill.timeoutMs);
  await until(`a call to ${drill.path} to be charged`, () =>
    env.sandbox.ledger.entries.slice(ledger0).some((e) => e.path === drill.path),
  );
  await first.kill();
  if (drill.clearFaults) env.sandbox.setFaults({});
  await worker();
  return { done: await cli, ledger0 };
}

/**
 * After a paid kill drill: the calls to `path` after the mark `mark` (a `seq` of `sandbox.truth.lastCall()`), once
 * every one the ledger charged since `ledger0` has finished (a held answer is recorded once sent or dropped); those
 * whose answer never arrived (at least one, or the drill killed nothing in flight) and what they cost.
 */
export async function settledPaidCalls(
  sandbox: Sandbox,
  path: string,
  mark: number,
  ledger0: number,
): Promise<{ calls: CallRecord[]; undelivered: CallRecord[]; lost: number }> {
  const paid = () => sandbox.ledger.entries.slice(ledger0).filter((e) => e.path === path).length;
  await until(
    'every held answer to be sent or dropped',
    () => sandbox.truth.calls({ path, after: mark }).filter((call) => call.credits > 0).length === paid(),
  );
  const calls = sandbox.truth.calls({ path, after: mark });
  const undelivered = calls.filter((call) => call.status === null);
  expect(undelivered.length).toBeGreaterThan(0);
  return { calls, undelivered, lost: undelivered.reduce((sum, call) => sum + call.credits, 0) };
}
