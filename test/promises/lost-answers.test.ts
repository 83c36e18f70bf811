/**
 * Promise: an answer the service charged and then lost (a 5xx after the work) is asked again, and the manifest
 * reports what it cost, so a double charge is visible: ledger = the spec's price for the distinct inputs + the
 * manifest's `unsaved_answers.credits`, and `credits_charged` = the ledger.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { readJobOutput } from '../helpers/output.ts';
import { lostAnswers, underFaults } from './faults.ts';
import { addressList, runJob } from './helpers.ts';
import { callsTo, chargedSince, enrichIdeal, lostAnswerCredits, PATHS, verifyIdeal } from './oracle.ts';

describe('promise: answers paid for and lost are counted', () => {
  const ctx = useJobEnv('lost-answers', { s3: true, sandbox: { seed: 53 } });
  beforeAll(async () => {
    await ctx.env.createBuckets('lost');
    await ctx.env.startWorker();
  });

  it('bulk enrichment: lost 5xx answers are paid again and reported; ledger = ideal + reported', async () => {
    const { env, dir } = ctx;
    const domains = Array.from({ length: 420 }, (_, i) => `lost-answer-${i}.com`);
    await writeFile(join(dir, 'domains.csv'), `domain\n${domains.join('\n')}\n`);
    const limit = 4;
    const ideal = enrichIdeal(env.sandbox, domains, { limit });
    const mark = env.sandbox.truth.lastCall();
    const output = 's3://lost/enrich';
    // The first three answers are lost after their charge (deterministic, whatever the order of the calls).
    const result = await underFaults(env.sandbox, lostAnswers(PATHS.enrichBulk, '5xx', 3), () =>
      runJob<BulkEnrichInput>(env, 'bulkEnrich', {
        jobId: 'lost-enrich',
        input: pathToFileURL(join(dir, 'domains.csv')).href,
        output,
        options: { limit },
      }),
    );
    expect(result.status).toBe('completed');
    const lost = lostAnswerCredits(env.sandbox, mark);
    expect(lost).toBeGreaterThan(0);
    const { manifest, lines } = await readJobOutput(output, 'lost-enrich');
    expect(lines.map((l) => l['domain']).sort()).toEqual(ideal.domains.map((d) => d.domain).sort());
    for (const line of lines.filter((l) => l['status'] === 'ok')) {
      const ids = (line['signals'] as { signal_id: string }[]).map((s) => s.signal_id);
      expect(ids).toEqual(ideal.signalIds.get(String(line['domain'])));
    }
    expect(manifest.unsaved_answers).toEqual({ credits: lost, unknown_calls: 0 });
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits + lost);
    expect(manifest.credits_charged).toBe(ideal.credits + lost);
    const calls = callsTo(env.sandbox, PATHS.enrichBulk, mark);
    const lostCalls = calls.filter((c) => c.fault === 'lost_answer_5xx').length;
    expect(calls).toHaveLength(ideal.calls + lostCalls);
  });

  it('verification: lost 5xx answers are paid again and reported the same way', async () => {
    const { env, dir } = ctx;
    const { rows, distinct } = addressList(2_100, 'lost');
    await writeFile(join(dir, 'emails.csv'), `email\n${rows.join('\n')}\n`);
    const ideal = verifyIdeal(env.sandbox, distinct);
    const mark = env.sandbox.truth.lastCall();
    const output = pathToFileURL(join(dir, 'verify-out')).href;
    const result = await underFaults(env.sandbox, lostAnswers(PATHS.verifyBulk, '5xx', 2), () =>
      runJob<VerifyEmailsInput>(env, 'verifyEmails', {
        jobId: 'lost-verify',
        input: pathToFileURL(join(dir, 'emails.csv')).href,
        output,
      }),
    );
    expect(result.status).toBe('completed');
    const lost = lostAnswerCredits(env.sandbox, mark);
    expect(lost).toBeGreaterThan(0);
    const { manifest, lines } = await readJobOutput(output, 'lost-verify');
    const emails = lines
      .filter((l) => !['invalid', 'duplicate'].includes(String(l['status'])))
      .map((l) => String(l['email']));
    expect(emails.sort()).toEqual([...distinct].sort());
    expect(manifest.unsaved_answers).toEqual({ credits: lost, unknown_calls: 0 });
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits + lost);
    expect(manifest.credits_charged).toBe(ideal.credits + lost);
    const calls = callsTo(env.sandbox, PATHS.verifyBulk, mark);
    expect(calls).toHaveLength(ideal.calls + calls.filter((c) => c.fault === 'lost_answer_5xx').length);
  });
});
