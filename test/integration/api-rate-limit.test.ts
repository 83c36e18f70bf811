/**
 * The account's budget is shared by every worker process and every job: two workers running two jobs at once take
 * their call slots from one limiter workflow, so the sandbox, enforcing the budget over a short sliding window,
 * never answers 429, and every API call took exactly one slot.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { apiRateLimiterId, slotsGrantedQuery } from '../../workflows/rate-limiter.ts';

/** The sandbox allows 10 calls in any 2 s; the workers are told 180/min (one call every 335 ms), a third less. */
const WINDOW_LIMIT = 10;
const WINDOW_MS = 2_000;
const BUDGET_PER_MINUTE = 180;
const DOMAINS_PER_JOB = 1_500; // 15 bulk calls each

describe('the API rate limiter shared by worker processes and jobs', () => {
  let env: JobEnv;
  let proxy: ApiProxy;
  let dir: string;

  beforeAll(async () => {
    env = await startJobEnv({
      sandbox: { seed: 3, rateLimitPerMinute: WINDOW_LIMIT, rateLimitWindowMs: WINDOW_MS },
    });
    proxy = await startApiProxy(env.sandbox.url);
    // Two workers on the same queues, as two processes of a deployment would be.
    await env.startWorker({ url: proxy.url, ratePerMinute: BUDGET_PER_MINUTE });
    await env.startWorker({ url: proxy.url, ratePerMinute: BUDGET_PER_MINUTE });
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-rate-'));
  });
  afterAll(async () => {
    await env?.stop();
    await proxy?.stop();
  });

  it('two jobs at once through two workers: no 429, one call and one slot per batch', async () => {
    const c = env.config();
    const jobs = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const rows = ['domain'];
        for (let i = 0; i < DOMAINS_PER_JOB; i++) rows.push(`${name}-company${i}.com`);
        const input = join(dir, `${name}.csv`);
        await writeFile(input, `${rows.join('\n')}\n`);
        const args: BulkEnrichInput = {
          jobId: `rate-${name}`,
          input: pathToFileURL(input).href,
          output: pathToFileURL(join(dir, 'out')).href,
          taskQueue: c.taskQueue,
          apiTaskQueue: c.apiTaskQueue,
          options: { limit: 1 },
        };
        return (await env.client.workflow.execute('bulkEnrich', {
          workflowId: args.jobId,
          taskQueue: c.taskQueue,
          args: [args],
        })) as JobResult;
      }),
    );
    const batches = 2 * Math.ceil(DOMAINS_PER_JOB / 100);
    for (const job of jobs) {
      expect(job.status).toBe('completed');
      expect(job.counts.lines).toBe(DOMAINS_PER_JOB);
    }
    const enrich = proxy.calls.filter((call) => call.path === '/v1/companies/enrich/bulk');
    expect(enrich.filter((call) => call.status === 429)).toHaveLength(0);
    expect(enrich.filter((call) => call.status === 200)).toHaveLength(batches);
    expect(enrich).toHaveLength(batches);

    const limiter = env.client.workflow.getHandle(apiRateLimiterId(c.apiTaskQueue));
    // Every call took a slot (a slot reached too late to use safely is given up, so there may be more slots).
    expect(await limiter.query(slotsGrantedQuery)).toBeGreaterThanOrEqual(proxy.calls.length);
  }, 180_000);
});
