/**
 * Promise: email verification accounts for every distinct address once, pays the spec's price for it (1 credit per
 * address verified, `unknown` and upstream failures free), retries upstream failures within the job, ends
 * `completed_with_errors` when some still fail, and a re-run retries exactly those, paying only for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { readJobOutput } from '../helpers/output.ts';
import { addressList, runJob } from './helpers.ts';
import { BULK_EMAILS, callsTo, chargedSince, PATHS, verifyIdeal } from './oracle.ts';

describe('promise: verification with upstream failures', () => {
  let env: JobEnv;

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 23 } });
    await env.createBuckets('promises');
    await env.startWorker();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('retries upstream failures within the job; those left make it completed_with_errors; a re-run retries exactly them', async () => {
    const { rows, distinct, invalid } = addressList(2_300, 'vu');
    const store = openStore('s3://promises/inputs');
    await store.writeText('emails.csv', `email\n${rows.join('\n')}\n`);
    const ideal = verifyIdeal(env.sandbox, distinct);
    expect(ideal.emails.size).toBe(distinct.length);
    const output = 's3://promises/verify';
    const input: VerifyEmailsInput & { jobId: string } = {
      jobId: 'verify-upstream',
      input: 's3://promises/inputs/emails.csv',
      output,
      // Three tries in all: at a 50% failure rate about one address in eight still fails after the last.
      upstreamRetryDelaysMs: [100, 200],
    };

    env.sandbox.setFaults({ verifyUpstreamFailureRate: 0.5 });
    const mark = env.sandbox.truth.lastCall();
    const ledger0 = env.sandbox.ledger.total();
    const first = await runJob(env, 'verifyEmails', input);

    expect(first.status).toBe('completed_with_errors');
    const run1 = await readJobOutput(output, input.jobId);
    const failing = run1.lines.filter(
      (l) => (l['error'] as { code?: string } | undefined)?.code === 'upstream_failure',
    );
    expect(failing.length).toBeGreaterThan(0);
    // Retried within the job: far fewer left than the half that failed on the first try.
    expect(failing.length).toBeLessThan(distinct.length / 4);
    const calls1 = callsTo(env.sandbox, PATHS.verifyBulk, mark);
    const firstTries = Math.ceil(distinct.length / BULK_EMAILS);
    expect(calls1.filter((c) => c.status === 200)).toHaveLength(calls1.length);
    // One call per chunk, plus at most one per chunk and retry round (3 tries in all).
    expect(calls1.length).toBeGreaterThan(firstTries);
    expect(calls1.length).toBeLessThanOrEqual(firstTries * 3);
    // Every address asked at most once successfully: never one already verified.
    const verifiedAt = new Map<string, number>();
    for (const call of calls1) {
      const failed = new Set(call.returned!['upstream_failures'] as string[]);
      for (const email of call.asked!['emails'] as string[]) {
        expect(verifiedAt.has(email)).toBe(false);
        if (!failed.has(email)) verifiedAt.set(email, call.seq);
      }
    }
    const paid1 = [...verifiedAt.keys()].reduce((sum, email) => sum + ideal.emails.get(email)!.credits, 0);
    expect(env.sandbox.ledger.total() - ledger0).toBe(paid1);
    expect(run1.manifest.credits_charged).toBe(paid1);

    // The upstream recovers; the same job again asks for exactly the addresses still failing.
    env.sandbox.setFaults({});
    const mark2 = env.sandbox.truth.lastCall();
    const second = await runJob(env, 'verifyEmails', input);
    expect(second.status).toBe('completed');
    const calls2 = callsTo(env.sandbox, PATHS.verifyBulk, mark2);
    const asked2 = calls2.flatMap((c) => c.asked!['emails'] as string[]).sort();
    expect(asked2).toEqual(failing.map((l) => String(l['email'])).sort());
    expect(calls2.length).toBeLessThanOrEqual(firstTries);

    // The whole job: every distinct address once, ledger = manifest = the spec's price for the distinct addresses.
    const { manifest, lines } = await readJobOutput(output, input.jobId);
    const emails = lines
      .filter((l) => !['invalid', 'duplicate'].includes(String(l['status'])))
      .map((l) => String(l['email']));
    expect(emails.sort()).toEqual([...distinct].sort());
    expect(lines.filter((l) => l['status'] === 'invalid')).toHaveLength(invalid);
    expect(lines.filter((l) => l['status'] === 'error')).toHaveLength(0);
    for (const line of lines.filter((l) => l['status'] === 'ok')) {
      expect(line['result']).toBe(ideal.emails.get(String(line['email']))!.result);
    }
    expect(env.sandbox.ledger.total() - ledger0).toBe(ideal.credits);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
    expect(manifest.credits_charged).toBe(ideal.credits);
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
    expect(manifest.status).toBe('completed');
  });
});
