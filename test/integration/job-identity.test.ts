/**
 * A job id remembers its input and options. Once, the same `--job-id` started with another input silently went on
 * with the first input's batches and reported the new input in its manifest. Now a second start that differs is
 * refused: by the CLI before anything starts (exit 2, naming what differs), and by the job's first activity for
 * callers that start the workflow themselves (a non-retryable InputError). Real Temporal dev server and sandbox.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ActivityFailure, type ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobResult, Manifest } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { runCli } from '../helpers/cli.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { expectInputError, rejectionOf } from '../helpers/workflow-failure.ts';
import { runOnEnvQueues } from '../promises/helpers.ts';
import { callsTo, PATHS } from '../promises/oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const ctx = useJobEnv('job-identity', {
  sandbox: { seed: 5, clock: () => CLOCK, exportTiming: { queuedMs: 0, runningMs: 0 } },
});
let first: string;
let second: string;
let output: string;

beforeAll(async () => {
  await ctx.env.startWorker();
  await writeFile(
    join(ctx.dir, 'a.csv'),
    `domain\n${Array.from({ length: 8 }, (_, i) => `first${i}.com`).join('\n')}\n`,
  );
  await writeFile(
    join(ctx.dir, 'b.csv'),
    `domain\n${Array.from({ length: 8 }, (_, i) => `second${i}.com`).join('\n')}\n`,
  );
  first = pathToFileURL(join(ctx.dir, 'a.csv')).href;
  second = pathToFileURL(join(ctx.dir, 'b.csv')).href;
  output = pathToFileURL(join(ctx.dir, 'out')).href;
});

function start(jobId: string, input: string, limit: number): Promise<JobResult> {
  const workflowId = `${jobId}-${Math.random().toString(36).slice(2, 8)}`;
  return runOnEnvQueues<JobResult>(ctx.env, 'bulkEnrich', workflowId, { jobId, input, output, options: { limit } });
}

const manifestOf = async (jobId: string) =>
  JSON.parse(await readFile(join(ctx.dir, 'out', jobId, '_manifest.json'), 'utf8')) as Manifest;

describe('a job id remembers its input and options', { timeout: 120_000 }, () => {
  it.each([
    ['another input', { input: () => second, limit: 2 }, /input/],
    ['another --limit', { input: () => first, limit: 3 }, /options/],
  ])(
    'a workflow started again under the same id with %s fails as an InputError naming it, and pays nothing',
    async (_name, change, names) => {
      const jobId = `same-id-${Math.random().toString(36).slice(2, 8)}`;
      await start(jobId, first, 2);
      const before = ctx.env.sandbox.truth.lastCall();
      const error = await rejectionOf(start(jobId, change.input(), change.limit));
      expect(error).toBeInstanceOf(WorkflowFailedError);
      // Refused by the job's first activity, before anything is prepared or called.
      const failure = (error as WorkflowFailedError).cause;
      expect(failure).toBeInstanceOf(ActivityFailure);
      expect((failure as ActivityFailure).activityType).toBe('findFinishedJob');
      expect(expectInputError(failure?.cause, names).message).toContain(jobId);
      expect(callsTo(ctx.env.sandbox, PATHS.enrichBulk, before)).toHaveLength(0);
      // The job's manifest still describes the first input.
      expect((await manifestOf(jobId)).input).toBe(first);
      // Started as it was, it is the same job: finished, nothing paid.
      await start(jobId, first, 2);
      expect(callsTo(ctx.env.sandbox, PATHS.enrichBulk, before)).toHaveLength(0);
    },
  );

  it('an intent export started again under the same id with other topics is refused, and pays nothing', async () => {
    const jobId = `same-export-${Math.random().toString(36).slice(2, 8)}`;
    const c = ctx.env.config();
    const exportJob = (topics: string[]) =>
      ctx.env.client.workflow.execute('intentExport', {
        workflowId: `${jobId}-${Math.random().toString(36).slice(2, 8)}`,
        taskQueue: c.taskQueue,
        args: [
          {
            jobId,
            output,
            request: { topic_ids: topics, limit: 5 },
            poll: { initialMs: 50, maxMs: 200 },
            taskQueue: c.taskQueue,
            apiTaskQueue: c.apiTaskQueue,
          },
        ],
      });
    await exportJob(['b2b_1']);
    const before = ctx.env.sandbox.truth.lastCall();
    const error = await rejectionOf(exportJob(['b2b_2']));
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined;
    expect(cause?.type).toBe('InputError');
    expect(cause?.message).toMatch(/options/);
    expect(cause?.message).toContain('b2b_2');
    expect(ctx.env.sandbox.truth.calls({ after: before, path: PATHS.exportSubmit })).toHaveLength(0);
  });

  it('the CLI refuses the same --job-id with another input: exit 2 naming the input, and nothing is started', async () => {
    const jobId = `cli-same-id-${Math.random().toString(36).slice(2, 8)}`;
    await start(jobId, first, 2);
    const before = ctx.env.sandbox.truth.lastCall();
    const args = ['enrich', '--input', second, '--output', output, '--limit', '2', '--job-id', jobId, '--wait'];
    const result = await runCli(args, { cwd: ctx.dir, env: ctx.env.childEnv(), timeout: 60_000 }, 'throw');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/input/);
    expect(result.stderr).toContain(second);
    expect(result.stderr).toContain(first);
    expect(callsTo(ctx.env.sandbox, PATHS.enrichBulk, before)).toHaveLength(0);
    expect((await manifestOf(jobId)).input).toBe(first);
  });
});
