import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { JobResult } from '../activities/jobs/types.ts';
import { apiRateLimiterId } from '../workflows/rate-limiter.ts';
import type { ApiProxy, ProxyCall } from './api-proxy.ts';
import { type ChildWorker, startChildWorker } from './cli-process.ts';
import type { JobEnv } from './job-env.ts';
import { batchIndex } from './job-output.ts';
import { between, seeded } from './random.ts';

/** The highest attempt number any `activity` of the workflow reached (from its history). */
export async function maxAttempt(client: Client, workflowId: string, activity: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = new Map<number, string>();
  let most = 0;
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(Number(event.eventId), scheduled.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (started && types.get(Number(started.scheduledEventId)) === activity)
      most = Math.max(most, started.attempt ?? 0);
  }
  return most;
}

/**
 * Sends the next workflow tasks of the job and of the account's rate limiter to the shared queue at once, where the
 * dead worker's sticky queue would hold them until its schedule-to-start timeout (10 s) ran out: the same recovery,
 * without the wait. What the drills check (every input once, the credits) does not depend on that wait.
 */
export async function forgetStickyQueues(env: JobEnv, workflowIds: string[]): Promise<void> {
  const namespace = env.config().namespace;
  // A workflow that already ended has no task to move: its failure is of no interest.
  await Promise.allSettled(
    workflowIds.map((workflowId) =>
      env.client.workflowService.resetStickyTaskQueue({ namespace, execution: { workflowId } }),
    ),
  );
}

/** Waits (bounded) until `check` holds. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface KillRecord {
  /** Answered calls of the job when the worker died. */
  afterCalls: number;
  /** Calls hanging in the worker, held at the proxy (they never reached the sandbox). */
  heldCalls: number;
  /** From the kill until the job's next answered call (a new worker took over). */
  recoveryMs: number;
}

export interface KillDrillOptions {
  env: JobEnv;
  proxy: ApiProxy;
  /** The running child worker; killed and replaced (the last one is returned). */
  worker: ChildWorker;
  workerEnv: Record<string, string>;
  workflow: string;
  /** The workflow's input; `jobId` and `output` (file://) locate the job. */
  input: { jobId: string; output: string };
  kills: number;
  seed: number;
  /**
   * `saved`: kill at random points where every call the sandbox answered is saved (new calls held at the proxy),
   * alternately at once and once a call hangs in the worker. `anywhere`: at any instant. `sigterm`: at any instant,
   * but SIGTERM, as a deploy stops a worker (it drains its running activities, then exits).
   */
  mode: 'saved' | 'anywhere' | 'sigterm';
}

export interface KillDrillOutcome {
  worker: ChildWorker;
  result: JobResult;
  kills: KillRecord[];
  /** Answered calls that were not saved when their worker died (paid again): only in `anywhere` mode. */
  lost: ProxyCall[];
  /** Paid calls per batch index. */
  paidPerBatch: Map<number, number>;
  /** Batch index of a call. */
  batchOf: (call: ProxyCall) => number;
  /** Ledger delta of the job (all accounts). */
  charged: number;
  wallMs: number;
}

/**
 * Runs a batch job (file:// output) while killing its worker (SIGKILL to the process group, or SIGTERM) `kills`
 * times at seeded random points, starting a new worker after each. Returns what happened; the caller judges it.
 */
export async function runKillDrill(options: KillDrillOptions): Promise<KillDrillOutcome> {
  const { env, proxy, workerEnv, input } = options;
  const started = Date.now();
  const outDir = fileURLToPath(input.output);
  const firstCall = proxy.calls.length;
  const ledgerStart = env.sandbox.ledger.total();
  const c = env.config();
  const handle = await env.client.workflow.start(options.workflow, {
    workflowId: input.jobId,
    taskQueue: c.taskQueue,
    // A workflow task the killed worker held goes to the next worker after 5 s (Temporal's default is 10 s).
    workflowTaskTimeout: 5_000,
    args: [{ ...input, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  });
  let finished = false;
  const outcome = handle.result().finally(() => {
    finished = true;
  }) as Promise<JobResult>;
  outcome.catch(() => {});
  await until('the input to be prepared', () => existsSync(join(outDir, input.jobId, 'work', '_prepared.json')));
  const batchOf = await batchIndex(input.output, input.jobId);
  const batchOfCall = (call: ProxyCall) => batchOf.get(call.domains![0]!)!;
  const saved = (call: ProxyCall) =>
    existsSync(join(outDir, input.jobId, 'parts', `part-${String(batchOfCall(call)).padStart(5, '0')}.jsonl.gz`));
  const jobCalls = () => proxy.calls.slice(firstCall).filter((call) => call.domains);
  const answered = () => jobCalls().filter((call) => call.status === 200 && call.answeredAt);

  const random = seeded(options.seed);
  const kills: KillRecord[] = [];
  const lost = new Map<number, ProxyCall>();
  let worker = options.worker;
  for (let k = 0; k < options.kills; k++) {
    // A seeded random point: after 1–3 more answered calls and 0–150 ms ...
    const target = answered().length + between(random, 1, 3);
    await until(`call ${target} of the job to be answered`, () => answered().length >= target, 120_000, 5);
    await sleep(between(random, 0, 150));
    let heldCalls = 0;
    if (options.mode === 'saved') {
      // ... where new calls are held at the proxy and every call the sandbox answered is saved; then either at once
      // (the worker dies between saving parts and reporting them) or once a call hangs in it (it dies mid-call).
      proxy.close();
      await proxy.drained();
      await until('every answered call to be saved', () => answered().every(saved), 10_000, 5);
      if (k % 2 === 0) await until('a call to be held', () => proxy.held() > 0, 15_000, 5);
      await sleep(between(random, 0, 100));
      heldCalls = proxy.held();
    }
    const afterCalls = answered().length;
    const killedAt = Date.now();
    if (options.mode === 'sigterm') await worker.stop(60_000);
    else await worker.kill();
    // Calls already forwarded still reach the sandbox, which answers and charges them with nobody listening.
    await proxy.drained();
    // With no worker alive, every answered call whose part is not there is lost (it will be paid again).
    for (const call of answered()) if (!saved(call)) lost.set(call.seq, call);
    await forgetStickyQueues(env, [input.jobId, apiRateLimiterId(c.apiTaskQueue)]);
    proxy.open();
    worker = await startChildWorker(workerEnv);
    const before = answered().length;
    await until('a new worker to take over', () => answered().length > before || finished, 120_000, 5);
    kills.push({ afterCalls, heldCalls, recoveryMs: Date.now() - killedAt });
  }

  const result = await outcome;
  const paidPerBatch = new Map<number, number>();
  for (const call of answered()) {
    if (call.credits > 0) paidPerBatch.set(batchOfCall(call), (paidPerBatch.get(batchOfCall(call)) ?? 0) + 1);
  }
  return {
    worker,
    result,
    kills,
    lost: [...lost.values()],
    paidPerBatch,
    batchOf: batchOfCall,
    charged: env.sandbox.ledger.total() - ledgerStart,
    wallMs: Date.now() - started,
  };
}
