/**
 * The account's rate limit is the only ceiling, and it is never crossed: workers told exactly the account's limit
 * (300 per minute, counted over 10 s windows: 50 calls in any 10 s), two of them, two jobs at once, against a
 * sandbox that enforces exactly that. Counted from the sandbox's call record: no window of its length
 * ever held more accepted calls than the limit, and not one call was refused with 429.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { runJob } from './helpers.ts';
import { BULK_DOMAINS, maxAcceptedInWindow, PATHS } from './oracle.ts';

const ACCOUNT_PER_MINUTE = 300;
const WINDOW_MS = 10_000;
const WINDOW_LIMIT = (ACCOUNT_PER_MINUTE * WINDOW_MS) / 60_000; // 50
/** Enough calls to fill more than two windows at the limit. */
const DOMAINS_PER_JOB = 6_000;

describe('the rate limit is the only ceiling and is never crossed', () => {
  let env: JobEnv;
  let dir: string;

  beforeAll(async () => {
    env = await startJobEnv({
      sandbox: { seed: 41, rateLimitPerMinute: WINDOW_LIMIT, rateLimitWindowMs: WINDOW_MS },
    });
    // Two workers, each told the account's limit and the window the service counts it over.
    const account = { ratePerMinute: ACCOUNT_PER_MINUTE, rateWindowMs: WINDOW_MS };
    await env.startWorker(account);
    await env.startWorker(account);
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-rate-promise-'));
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('two jobs at the account limit: no window over the limit, no call refused, one call per batch', async () => {
    const mark = env.sandbox.truth.lastCall();
    const jobs = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const rows = ['domain', ...Array.from({ length: DOMAINS_PER_JOB }, (_, i) => `${name}-rate${i}.com`)];
        const input = join(dir, `${name}.csv`);
        await writeFile(input, `${rows.join('\n')}\n`);
        return runJob<BulkEnrichInput>(env, 'bulkEnrich', {
          jobId: `rate-promise-${name}`,
          input: pathToFileURL(input).href,
          output: pathToFileURL(join(dir, 'out')).href,
          options: { limit: 1 },
        });
      }),
    );
    for (const job of jobs) {
      expect(job.status).toBe('completed');
      expect(job.counts.lines).toBe(DOMAINS_PER_JOB);
    }
    const calls = env.sandbox.truth.calls({ after: mark });
    const most = maxAcceptedInWindow(calls, WINDOW_MS);
    console.log(
      `rate-limit promise: ${calls.length} calls, at most ${most} in any ${WINDOW_MS} ms (limit ${WINDOW_LIMIT})`,
    );
    expect(calls.filter((call) => call.status === 429)).toEqual([]);
    expect(most).toBeLessThanOrEqual(WINDOW_LIMIT);
    // Every batch was one call (a refused call would have shown up here as one more).
    const enrich = calls.filter((call) => call.path === PATHS.enrichBulk);
    expect(enrich).toHaveLength(2 * Math.ceil(DOMAINS_PER_JOB / BULK_DOMAINS));
  }, 240_000);
});
