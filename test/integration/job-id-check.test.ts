import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { expectInputError, rejectionOf } from '../helpers/workflow-failure.ts';

describe('job workflows check their id before doing anything', () => {
  let env: JobEnv;
  let dir: string;
  beforeAll(async () => {
    env = await startJobEnv();
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-job-id-'));
  });
  afterAll(async () => {
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['verifyEmails', 'a/parts'],
    ['bulkEnrich', '../..'],
    ['intentExport', 'a/../b'],
  ])('%s with job id %j fails as an InputError and writes nothing', async (workflow, jobId) => {
    const c = env.config();
    const output = pathToFileURL(join(dir, 'out')).href;
    const args =
      workflow === 'intentExport'
        ? { jobId, output, request: { topics: ['b2b_1'] }, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }
        : { jobId, input: join(dir, 'in.csv'), output, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue };
    const err = await rejectionOf(
      env.client.workflow.execute(workflow, { workflowId: `bad-id-${workflow}`, taskQueue: c.taskQueue, args: [args] }),
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expectInputError((err as WorkflowFailedError).cause, /job id .* must be 1 to 128 letters/);
    const history = await env.client.workflow.getHandle(`bad-id-${workflow}`).fetchHistory();
    const scheduled = history.events?.filter((e) => e.activityTaskScheduledEventAttributes) ?? [];
    expect(scheduled).toHaveLength(0);
    expect(await readdir(dir)).toEqual([]);
  });
});
