/**
 * `--max-credits` is a ceiling that still buys work: a budget below one batch's worst case (100 domains × 500
 * signals × 2 credits) enriches as many domains as it can pay for at their worst, never charges past the budget,
 * and the same job with a higher budget finishes the rest without paying for anything twice. Compared with the
 * sandbox's truth (test/promises/oracle.ts), not with what the kit reports.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { readJobOutput } from '../helpers/output.ts';
import { addressList, runOnEnvQueues } from './helpers.ts';
import { BULK_DOMAINS, callsTo, chargedSince, enrichIdeal, PATHS, verifyIdeal } from './oracle.ts';

/** What one domain can cost at its worst without `limit`: 500 signals × 2 credits. */
const WORST_PER_DOMAIN = 1000;

describe('a credit budget below one batch at its worst', () => {
  let env: JobEnv;
  let dir: string;
  const inputs = Array.from({ length: 300 }, (_, i) => `budget-co${i}.com`);

  beforeAll(async () => {
    // A fixed service clock: the truth read after a job is the one the job saw.
    env = await startJobEnv({ sandbox: { seed: 31, clock: () => SANDBOX_EPOCH_MS + 30 * 86_400_000 } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-budget-'));
    await writeFile(join(dir, 'crm.csv'), `domain\n${inputs.join('\n')}\n`);
  });
  afterAll(async () => {
    await env?.stop();
  });

  const run = (input: BulkEnrichInput | VerifyEmailsInput, workflow = 'bulkEnrich'): Promise<JobResult> =>
    runOnEnvQueues<JobResult>(env, workflow, `${input.jobId}-${Math.random().toString(36).slice(2, 8)}`, input);

  it('does the work it can pay for, stays within the budget, and a higher budget finishes without paying twice', async () => {
    const ideal = enrichIdeal(env.sandbox, inputs);
    // The case of the issue: the budget cannot pay for one whole batch at its worst, nor for the whole job, but
    // for several domains at their worst.
    const budget = 8_000;
    expect(budget).toBeLessThan(BULK_DOMAINS * WORST_PER_DOMAIN);
    expect(ideal.credits).toBeGreaterThan(budget + WORST_PER_DOMAIN);

    const output = pathToFileURL(join(dir, 'out')).href;
    const job = { jobId: 'small-budget', input: pathToFileURL(join(dir, 'crm.csv')).href, output };
    const mark = env.sandbox.truth.lastCall();
    const stopped = await run({ ...job, maxCredits: budget });
    const spent = chargedSince(env.sandbox, mark);

    expect(stopped.status).toBe('budget_exhausted');
    expect(spent).toBeLessThanOrEqual(budget);
    // It went as far as the budget allows: what is left cannot pay for one more domain at its worst.
    expect(budget - spent).toBeLessThan(WORST_PER_DOMAIN);
    const first = await readJobOutput(output, job.jobId);
    expect(first.manifest.credits_charged).toBe(spent);
    // Every answer paid for is in the output, once, and is the truth.
    const paidFor = first.lines.filter((line) => !['invalid', 'duplicate'].includes(String(line['status'])));
    expect(new Set(paidFor.map((line) => line['domain'])).size).toBe(paidFor.length);
    expect(paidFor.length).toBeGreaterThan(0);
    let linesCredits = 0;
    for (const line of paidFor) {
      const ids = ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => s.signal_id);
      expect(ids).toEqual(ideal.signalIds.get(String(line['domain'])) ?? []);
      linesCredits += 2 * ids.length;
    }
    expect(linesCredits).toBe(spent);

    const markAgain = env.sandbox.truth.lastCall();
    const finished = await run({ ...job, maxCredits: 10_000_000 });
    expect(finished.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, job.jobId);
    const domains = lines.map((line) => String(line['domain']));
    expect(new Set(domains).size).toBe(domains.length);
    expect(new Set(domains)).toEqual(new Set(ideal.domains.map((d) => d.domain)));
    for (const line of lines) {
      const ids = ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => s.signal_id);
      expect(ids).toEqual(ideal.signalIds.get(String(line['domain'])) ?? []);
    }
    // Paid once in all: the two runs together cost exactly what the spec charges for the distinct domains.
    expect(spent + chargedSince(env.sandbox, markAgain)).toBe(ideal.credits);
    expect(manifest.credits_charged).toBe(ideal.credits);
    // The second run sends only what is left: full batches plus the one the budget stopped inside.
    const left = inputs.length - paidFor.length;
    expect(callsTo(env.sandbox, PATHS.enrichBulk, markAgain).length).toBeLessThanOrEqual(
      Math.ceil(left / BULK_DOMAINS) + 1,
    );
  });

  it('verification: a budget below one chunk verifies what it can pay for; a higher budget finishes the rest', async () => {
    const { rows, distinct } = addressList(1_500, 'budget');
    await writeFile(join(dir, 'emails.csv'), `email\n${rows.join('\n')}\n`);
    const ideal = verifyIdeal(env.sandbox, rows);
    const budget = 600; // a chunk of 1,000 addresses could cost 1,000
    expect(ideal.credits).toBeGreaterThan(budget);
    const output = pathToFileURL(join(dir, 'verify-out')).href;
    const job = { jobId: 'verify-budget', input: pathToFileURL(join(dir, 'emails.csv')).href, output };

    const mark = env.sandbox.truth.lastCall();
    const stopped = await run({ ...job, maxCredits: budget }, 'verifyEmails');
    const spent = chargedSince(env.sandbox, mark);
    expect(stopped.status).toBe('budget_exhausted');
    // 1 credit per address at most: the budget is used to the last credit, never past it.
    expect(spent).toBe(budget);
    expect(stopped.credits).toBe(spent);

    const again = env.sandbox.truth.lastCall();
    const finished = await run({ ...job, maxCredits: 1_000_000 }, 'verifyEmails');
    expect(finished.status).toBe('completed');
    expect(spent + chargedSince(env.sandbox, again)).toBe(ideal.credits);
    const { lines } = await readJobOutput(output, job.jobId);
    const emails = lines
      .filter((line) => !['invalid', 'duplicate'].includes(String(line['status'])))
      .map((line) => String(line['email']));
    expect(emails.sort()).toEqual([...new Set(distinct.map((e) => e.toLowerCase()))].sort());
    for (const line of lines.filter((l) => l['status'] === 'ok')) {
      expect(line['result']).toBe(ideal.emails.get(String(line['email']))?.result);
    }
  });
});
