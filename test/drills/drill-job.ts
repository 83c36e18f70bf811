/**
 * What the drills that run a bulk enrichment on child workers share: starting the job so that Temporal gives up on a
 * stopped worker within seconds, and, for drills whose late answers must arrive while the job is finalizing (the moment
 * a job used to count them as of unknown cost), waiting until its `finalizeJob` activity runs.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll } from 'vitest';
import { type ApiProxy, type ProxyCall, startApiProxy } from '../../testkit/api-proxy.ts';
import type { ChildWorker } from '../../testkit/cli-process.ts';
import { type DrillInput, removeTempDirs, tempDir, writeDomainsCsv } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';
import { clientOwner } from '../../testkit/loopback-sockets.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';

export interface ChildWorkerDrill {
  env: JobEnv;
  /** Between the workers and the sandbox: every call, its answer, and a way to hold answers. */
  proxy: ApiProxy;
  dir: string;
  /** The CRM-like input, `crm.csv` in `dir`. */
  input: DrillInput;
  /** The drill's child workers: woken (SIGCONT) and killed after the last test. */
  workers: ChildWorker[];
  /** Starts a job on the input, written under `dir/out` (see `startDrillJob`). */
  startJob(jobId: string, options: Omit<DrillJob, 'jobId' | 'input' | 'output'>): Promise<RunningDrillJob>;
}

export interface RunningDrillJob {
  handle: WorkflowHandle;
  /** The output URL, and its directory. */
  output: string;
  outputDir: string;
  /** Credits the sandbox charged since the job started (its ledger). */
  charged(): number;
  /** The job's bulk calls, by the proxy's record. */
  calls(): ProxyCall[];
  /** The sandbox's last call before the job (for `sandbox.truth.calls({ after })`). */
  mark: number;
}

/**
 * For the enclosing describe block: a job environment whose sandbox (seed `seed`, its clock fixed at `clockMs`) answers
 * in 150 ms, so that calls are in flight when a drill strikes; a recording proxy in front of it; and an input of
 * `distinct` domains (`crm.csv`, drawn from `csvSeed`), ready before the first test. After the last, the workers the
 * drill pushed to `workers` are woken if stopped and killed, and everything else stopped and removed.
 */
export function useChildWorkerDrill(
  label: string,
  options: {
    seed: number;
    clockMs: number;
    distinct: number;
    csvSeed: number;
    /** A Temporal server of the drill's own, which it may restart. */
    ownTemporal?: boolean;
    /** Flags of that server (`temporal server start-dev`): implies a server of its own. */
    temporalArgs?: string[];
  },
): ChildWorkerDrill {
  const drill = {
    workers: [] as ChildWorker[],
    async startJob(jobId, options) {
      const { env, proxy, dir, input } = drill;
      const outputDir = join(dir, 'out');
      const output = pathToFileURL(outputDir).href;
      const before = env.sandbox.ledger.total();
      const firstCall = proxy.calls.length;
      const mark = env.sandbox.truth.lastCall();
      const handle = await startDrillJob(env, { ...options, jobId, input: input.url, output });
      return {
        handle,
        output,
        outputDir,
        mark,
        charged: () => env.sandbox.ledger.total() - before,
        calls: () => proxy.calls.slice(firstCall).filter((call) => call.domains),
      };
    },
  } as ChildWorkerDrill;
  beforeAll(async () => {
    const sandbox = { seed: options.seed, clock: () => options.clockMs, faults: { latencyMs: 150 } };
    const temporal = {
      ...(options.ownTemporal ? { ownTemporal: true } : {}),
      ...(options.temporalArgs ? { temporalArgs: options.temporalArgs } : {}),
    };
    drill.env = await startJobEnv({ sandbox, ...temporal });
    // Each call names the worker that sent it (its pid), for the drills' judgements and their logs.
    const senderOf = (clientPort: number, proxyPort: number) => {
      const pid = clientOwner(
        clientPort,
        proxyPort,
        drill.workers.map((worker) => worker.pid),
      );
      return pid === undefined ? undefined : workerSender(pid);
    };
    drill.proxy = await startApiProxy(drill.env.sandbox.url, { senderOf });
    drill.dir = await tempDir(label);
    drill.input = await writeDomainsCsv(drill.dir, 'crm.csv', { distinct: options.distinct, seed: options.csvSeed });
  });
  afterAll(async () => {
    for (const worker of drill.workers) {
      try {
        process.kill(-worker.pid, 'SIGCONT');
      } catch {}
    }
    await Promise.allSettled(drill.workers.map((worker) => worker.kill()));
    await drill.proxy?.stop();
    await drill.env?.stop();
    await removeTempDirs();
  });
  return drill;
}

/** How a call sent by the drill's worker `pid` names its sender (`ProxyCall.sender`). */
export function workerSender(pid: number): string {
  return `pid ${pid}`;
}

export interface DrillJob {
  jobId: string;
  /** The input file's URL. */
  input: string;
  output: string;
  limit: number;
  concurrency: number;
  /** The activities' heartbeat timeout: how soon Temporal starts another attempt of a stopped one. */
  heartbeatTimeoutMs: number;
}

/** Starts `bulkEnrich` on the environment's queues, its workflow tasks timing out after 3 s (a stopped worker's). */
export function startDrillJob(env: JobEnv, job: DrillJob): Promise<WorkflowHandle> {
  const c = env.config();
  const args: BulkEnrichInput = {
    jobId: job.jobId,
    input: job.input,
    output: job.output,
    options: { limit: job.limit },
    concurrency: job.concurrency,
    heartbeatTimeoutMs: job.heartbeatTimeoutMs,
    taskQueue: c.taskQueue,
    apiTaskQueue: c.apiTaskQueue,
  };
  return env.client.workflow.start('bulkEnrich', {
    workflowId: job.jobId,
    taskQueue: c.taskQueue,
    workflowTaskTimeout: 3_000,
    args: [args],
  });
}

/** How long finalize runs before the late answers arrive: it takes well under a second when it does not wait. */
export const FINALIZE_GRACE_MS = 3_000;

/** The job's lines parts in its output directory (`<dir>/<jobId>/parts/part-N.jsonl[.gz]`). */
export function savedParts(outputDir: string, jobId: string): number {
  try {
    return readdirSync(join(outputDir, jobId, 'parts')).filter((name) => /^part-\d+\.jsonl(\.gz)?$/.test(name)).length;
  } catch {
    return 0;
  }
}

/** Whether the workflow has ended, or runs its `activity` (Temporal lists it among the pending ones, started). */
async function runningOrEnded(client: Client, workflowId: string, activity: string): Promise<boolean> {
  const described = await client.workflow.getHandle(workflowId).describe();
  if (described.status.name !== 'RUNNING') return true;
  return (described.raw.pendingActivities ?? []).some(
    (pending) => pending.activityType?.name === activity && pending.state === 2, // STARTED
  );
}

/**
 * Waits until every batch of the job is saved and its finalize step has run for `FINALIZE_GRACE_MS` (or the job has
 * ended). Returns whether it had ended: a job that finalizes without waiting for the late answers ends by then.
 */
export async function untilFinalizing(
  client: Client,
  workflowId: string,
  parts: { dir: string; batches: number },
): Promise<boolean> {
  await until('every batch to be saved', () => savedParts(parts.dir, workflowId) >= parts.batches, 90_000, 20);
  return untilFinalizeRuns(client, workflowId, 'finalizeJob');
}

/**
 * Waits until the workflow's finalize activity (`finalizeJob`, `finalizePushRun`, ...) has run for
 * `FINALIZE_GRACE_MS`, or the workflow has ended. Returns whether it had ended: a run that finalizes without waiting
 * for late answers ends by then.
 */
export async function untilFinalizeRuns(client: Client, workflowId: string, activity: string): Promise<boolean> {
  await until(`${activity} to run`, () => runningOrEnded(client, workflowId, activity), 180_000, 100);
  const deadline = Date.now() + FINALIZE_GRACE_MS;
  for (;;) {
    const described = await client.workflow.getHandle(workflowId).describe();
    if (described.status.name !== 'RUNNING') return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}
