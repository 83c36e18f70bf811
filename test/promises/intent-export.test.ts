/**
 * Promise: an intent export pays its flat fee once. A submit whose answer is lost after the service charged it is
 * never sent again without the user's word: the job stops naming the possible charge and `--resubmit`; with it the
 * job finishes and the manifest reports the earlier charge, so credits in the manifest = the ledger = the spec's
 * price + the reported lost answer.
 */
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobFailureMessage } from '../../cli/job-outcome.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { IntentExportInput } from '../../workflows/intent-export.ts';
import { readJobOutput } from '../helpers/output.ts';
import { lostAnswers } from './faults.ts';
import { runJob } from './helpers.ts';
import { callsTo, chargedSince, exportIdeal, PATHS } from './oracle.ts';

describe('promise: an intent export with a lost answer', () => {
  let env: JobEnv;

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 31, exportTiming: { queuedMs: 200, runningMs: 300 } } });
    await env.createBuckets('exports');
    await env.startWorker();
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const job = (jobId: string, output: string, topics: string[]): IntentExportInput & { jobId: string } => ({
    jobId,
    output,
    request: { topic_ids: topics, seniority: ['Vp', 'Cxo'] },
    poll: { initialMs: 100, maxMs: 400 },
  });

  /** The job's failure message (the workflow fails; the CLI prints this and exits 1). */
  const failureOf = async (input: IntentExportInput & { jobId: string }): Promise<string> => {
    try {
      await runJob(env, 'intentExport', input);
    } catch (error) {
      return jobFailureMessage(error);
    }
    throw new Error(`job ${input.jobId} completed; it should have stopped`);
  };

  it('a 5xx after the charge stops the job naming the charge and --resubmit; --resubmit finishes, the lost fee reported', async () => {
    const input = job('export-lost-5xx', 's3://exports/lost', ['b2b_11', 'b2b_12']);
    const ideal = exportIdeal(env.sandbox, input.request);
    expect(ideal.credits).toBeGreaterThan(0);
    const mark = env.sandbox.truth.lastCall();
    env.sandbox.setFaults(lostAnswers(PATHS.exportSubmit, '5xx', 1));
    const message = await failureOf(input);
    expect(message).toContain('--resubmit');
    expect(message).toContain(`${ideal.credits} credits were charged`);
    expect(callsTo(env.sandbox, PATHS.exportSubmit, mark)).toHaveLength(1);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);
    const stopped = await readJobOutput(input.output, input.jobId);
    expect(stopped.manifest.status).toBe('failed');
    expect(stopped.manifest.credits_charged).toBe(ideal.credits);
    expect(stopped.manifest.unsaved_answers).toEqual({ credits: ideal.credits, unknown_calls: 0 });

    // The same job again, still without the user's word: nothing is sent.
    env.sandbox.setFaults({});
    expect(await failureOf(input)).toContain('--resubmit');
    expect(callsTo(env.sandbox, PATHS.exportSubmit, mark)).toHaveLength(1);

    const result = await runJob(env, 'intentExport', { ...input, resubmit: true });
    expect(result.status).toBe('completed');
    const submits = callsTo(env.sandbox, PATHS.exportSubmit, mark);
    expect(submits).toHaveLength(2);
    const { manifest, lines } = await readJobOutput(input.output, input.jobId);
    expect(lines).toHaveLength(ideal.rowCount);
    expect(manifest.counts.lines).toBe(ideal.rowCount);
    // Ledger = the spec's price once + the lost answer the manifest reports.
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits + manifest.unsaved_answers!.credits);
    expect(manifest.credits_charged).toBe(2 * ideal.credits);
    expect(manifest.unsaved_answers).toEqual({ credits: ideal.credits, unknown_calls: 0 });
  });

  it('a reset after the charge: the kit cannot know the cost, says so, and sends nothing again without --resubmit', async () => {
    const output = pathToFileURL(await tempDir('export-reset')).href;
    const input = job('export-lost-reset', output, ['b2b_21']);
    const ideal = exportIdeal(env.sandbox, input.request);
    const mark = env.sandbox.truth.lastCall();
    env.sandbox.setFaults(lostAnswers(PATHS.exportSubmit, 'reset', 1));
    const message = await failureOf(input);
    env.sandbox.setFaults({});
    expect(message).toContain('unknown outcome');
    expect(message).toContain('--resubmit');
    const submits = callsTo(env.sandbox, PATHS.exportSubmit, mark);
    expect(submits.map((c) => [c.status, c.fault, c.credits])).toEqual([[null, 'lost_answer_reset', ideal.credits]]);
    const { manifest } = await readJobOutput(output, input.jobId);
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 1 });
    // What the manifest cannot know is bounded by what it says: one submit of unknown outcome.
    expect(chargedSince(env.sandbox, mark) - manifest.credits_charged).toBe(ideal.credits);
  });

  it('an export with no rows costs nothing (spec 7) and writes an empty, manifested part', async () => {
    const output = pathToFileURL(await tempDir('export-empty')).href;
    const input = job('export-empty', output, ['b2b_5']);
    input.request = { topic_ids: ['b2b_5'], seniority: ['Cxo'], department: ['No Such Department'] };
    const ideal = exportIdeal(env.sandbox, input.request);
    expect(ideal).toMatchObject({ rowCount: 0, credits: 0 });
    const mark = env.sandbox.truth.lastCall();
    const result = await runJob(env, 'intentExport', input);
    expect(result.status).toBe('completed');
    expect(chargedSince(env.sandbox, mark)).toBe(0);
    const { manifest, lines } = await readJobOutput(output, input.jobId);
    expect(lines).toHaveLength(0);
    expect(manifest.credits_charged).toBe(0);
    expect(callsTo(env.sandbox, PATHS.exportSubmit, mark)).toHaveLength(1);
  });
});
