/**
 * The account's rate limiter (workflows/rate-limiter.ts) is a workflow that outlives every deploy, so it must
 * follow every rollout: started by unversioned workers, moved to a versioned build when versioning is turned on,
 * pinned to a build by hand, it ends up on the current version, and paid jobs still run once the builds it ran on
 * have no workers left. When no worker can run it at all, API calls fail saying so instead of waiting silently.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { runCli } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { RateLimiterPermits } from '../../workers/rate-limiter-permits.ts';
import { startWorker, type WorkerHandle } from '../../workers/worker.ts';
import { apiRateLimiterId } from '../../workflows/rate-limiter.ts';

const DEPLOYMENT = 'limiter-rollout';
// Enum values of temporal.api (VersioningBehavior, VersioningOverride.PinnedOverrideBehavior).
const PINNED = 1;
const AUTO_UPGRADE = 2;

describe('the account rate limiter across rollouts', () => {
  let env: JobEnv;
  let dir: string;
  let input: string;
  const workers: WorkerHandle[] = [];

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 9 } });
    dir = await tempDir('limiter-rollout');
    input = join(dir, 'crm.csv');
    await writeFile(input, `website\n${Array.from({ length: 3 }, (_, i) => `rollout${i}.com`).join('\n')}\n`);
  });
  afterAll(async () => {
    await Promise.allSettled(workers.map((w) => w.shutdown()));
    await env?.stop();
    await removeTempDirs();
  });

  const start = async (buildId?: string): Promise<WorkerHandle> => {
    const worker = await startWorker({
      config: env.config(),
      workflowBundle: env.bundle,
      ...(buildId ? { versioning: { deploymentName: DEPLOYMENT, buildId, behavior: 'PINNED' as const } } : {}),
    });
    workers.push(worker);
    if (buildId) await worker.makeCurrentVersion();
    return worker;
  };

  /** A paid job (one API call, so one slot from the limiter); fails the test instead of hanging. */
  const paidJob = async (jobId: string): Promise<JobResult> => {
    const c = env.config();
    const job = env.client.workflow.execute('bulkEnrich', {
      workflowId: jobId,
      taskQueue: c.taskQueue,
      args: [
        {
          jobId,
          input: pathToFileURL(input).href,
          output: pathToFileURL(join(dir, 'out')).href,
          options: { limit: 1 },
          taskQueue: c.taskQueue,
          apiTaskQueue: c.apiTaskQueue,
        },
      ],
    }) as Promise<JobResult>;
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${jobId} made no progress in 45 s (the limiter is stuck)`)), 45_000);
    });
    try {
      return await Promise.race([job, stuck]);
    } finally {
      clearTimeout(timer);
    }
  };

  const limiter = (): Promise<WorkflowExecutionDescription> =>
    env.client.workflow.getHandle(apiRateLimiterId(env.config().apiTaskQueue)).describe();

  it('started unversioned, then versioning on, then pinned by hand: jobs run after each build it ran on is gone', async () => {
    const unversioned = await start();
    expect((await paidJob('rollout-unversioned')).status).toBe('completed');
    expect((await limiter()).raw.workflowExecutionInfo?.versioningInfo?.behavior ?? 0).toBe(0);

    // Versioning is turned on: the first versioned build becomes current, the unversioned workers go.
    const first = await start('build-1');
    await unversioned.shutdown();
    expect((await paidJob('rollout-build-1')).status).toBe('completed');
    // The limiter moved to that build and follows the current version from there, instead of being pinned to it.
    const moved = (await limiter()).raw.workflowExecutionInfo?.versioningInfo;
    expect(moved?.deploymentVersion?.buildId).toBe('build-1');
    expect(moved?.behavior).toBe(AUTO_UPGRADE);

    // An operator pins it to build 1 (or an earlier release left it pinned there); then the next release rolls out.
    await env.client.workflowService.updateWorkflowExecutionOptions({
      namespace: env.config().namespace,
      workflowExecution: { workflowId: apiRateLimiterId(env.config().apiTaskQueue) },
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: { behavior: PINNED, version: { deploymentName: DEPLOYMENT, buildId: 'build-1' } },
        },
      },
      updateMask: { paths: ['versioning_override'] },
    });
    await start('build-2');
    await first.shutdown();
    expect((await paidJob('rollout-build-2')).status).toBe('completed');
    const upgraded = (await limiter()).raw.workflowExecutionInfo?.versioningInfo;
    expect(upgraded?.deploymentVersion?.buildId).toBe('build-2');
  }, 180_000);

  it('with no worker to run the limiter, a call for a slot fails saying so instead of waiting', async () => {
    const c = env.config();
    const permits = new RateLimiterPermits({
      client: env.client,
      taskQueue: `${c.taskQueue}-nobody`,
      apiTaskQueue: `${c.apiTaskQueue}-nobody`,
      perMinute: 60,
    });
    await expect(permits.acquire()).rejects.toThrow(
      new RegExp(`rate limiter .* does not answer: no worker polls task queue "${c.taskQueue}-nobody"`),
    );
  }, 60_000);

  it('a job whose API calls keep failing says why on --wait, instead of waiting silently', async () => {
    // Build 2's worker (the current version) serves the job; every API call fails with a 5xx and is retried.
    env.sandbox.setFaults({ errorRate: 1 });
    try {
      const args = ['enrich', '--input', input, '--output', join(dir, 'out'), '--job-id', 'stalled-job', '--wait'];
      const retryNotes = (stderr: string) =>
        stderr
          .split('\n')
          .filter((line) => line.startsWith('{"event":"retrying"'))
          .map((line) => JSON.parse(line) as { activity: string; attempt: number; error: string });
      // The command would wait forever: it is stopped once it has said why (an event), or fails at the deadline.
      const run = await runCli(args, env.childEnv(), {
        timeoutMs: 170_000,
        until: ({ stderr }) => stderr.endsWith('\n') && retryNotes(stderr).length > 0,
      });
      expect(run.stoppedAtEvent, run.stderr).toBe(true);
      const notes = retryNotes(run.stderr);
      expect(notes[0]!.attempt).toBeGreaterThanOrEqual(2);
      expect(notes[0]!.error).toMatch(/50[023]/);
    } finally {
      env.sandbox.setFaults({});
      await env.client.workflow
        .getHandle('stalled-job')
        .terminate('test over')
        .catch(() => {});
    }
  }, 180_000);
});
