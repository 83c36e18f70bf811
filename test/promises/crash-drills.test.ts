/**
 * Promise: a crash never pays twice without saying so. A real `signal-kit worker` process is SIGKILLed while a
 * paid answer is on its way to it (the sandbox holds the answer after charging), then another worker takes over.
 * - Export: the submit's outcome is unknown to the kit, so it stops naming the possible charge and `--resubmit`
 *   instead of submitting again; with `--resubmit` it finishes.
 * - Verification: the batch is asked again (a lost per-item answer costs at most the calls in flight) and the
 *   manifest counts the calls whose answers were never saved, so the ledger is the spec's price for the distinct
 *   addresses plus at most that many calls' worth.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';
import { childWorkers, killWorkerWhilePaid } from '../helpers/child-workers.ts';
import { readJobOutput } from '../helpers/output.ts';
import { addressList } from './helpers.ts';
import { BULK_EMAILS, callsTo, chargedSince, exportIdeal, PATHS, verifyIdeal } from './oracle.ts';

/** Verification chunks in flight at once (`--concurrency`): the most calls a dying worker can leave unsaved. */
const IN_FLIGHT = 2;

describe('promise: crash drills with real worker processes', () => {
  let env: JobEnv;

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 41, exportTiming: { queuedMs: 200, runningMs: 300 } } });
    await env.createBuckets('drills');
  });
  afterAll(async () => {
    await env?.stop();
    await removeTempDirs();
  });

  const worker = childWorkers(() => env);

  it('export: a worker killed between the charged submit and saving the id never submits again on its own', async () => {
    const output = 's3://drills/exports';
    const topics = ['b2b_31', 'b2b_32'];
    const ideal = exportIdeal(env.sandbox, { topic_ids: topics });
    const args = ['intent-export', '--topics', topics.join(','), '--output', output, '--job-id', 'crash-export'];
    const mark = env.sandbox.truth.lastCall();
    const { done: stopped } = await killWorkerWhilePaid(env, worker, {
      args: [...args, '--wait'],
      path: PATHS.exportSubmit,
      holdMs: 8_000,
      timeoutMs: 120_000,
      clearFaults: false,
    });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('unknown outcome');
    expect(stopped.stderr).toContain('--resubmit');
    await until('the held answer to be dropped', () => callsTo(env.sandbox, PATHS.exportSubmit, mark).length === 1);
    const [submit] = callsTo(env.sandbox, PATHS.exportSubmit, mark);
    expect(submit).toMatchObject({ status: null, credits: ideal.credits });
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits);

    env.sandbox.setFaults({});
    const resumed = await runCli([...args, '--resubmit', '--wait'], env.childEnv(), 120_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(callsTo(env.sandbox, PATHS.exportSubmit, mark)).toHaveLength(2);
    const { manifest, lines } = await readJobOutput(output, 'crash-export');
    expect(lines).toHaveLength(ideal.rowCount);
    // The dead worker's submit is the one unknown call the manifest names; the ledger holds it and nothing else.
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 1 });
    expect(manifest.credits_charged).toBe(ideal.credits);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits + ideal.credits);
  });

  it('verification: a worker killed while paid answers are on their way; the rest of the job pays only the spec price', async () => {
    const dir = await tempDir('crash-verify');
    const { rows, distinct } = addressList(2_600, 'crash');
    await writeFile(join(dir, 'emails.csv'), `email\n${rows.join('\n')}\n`);
    const output = pathToFileURL(join(dir, 'out')).href;
    const ideal = verifyIdeal(env.sandbox, distinct);
    const args = [
      'verify-emails',
      '--input',
      pathToFileURL(join(dir, 'emails.csv')).href,
      '--output',
      output,
      '--concurrency',
      String(IN_FLIGHT),
    ];
    const mark = env.sandbox.truth.lastCall();
    const { done, ledger0 } = await killWorkerWhilePaid(env, worker, {
      args: [...args, '--job-id', 'crash-verify', '--wait'],
      path: PATHS.verifyBulk,
      holdMs: 8_000,
      timeoutMs: 180_000,
      clearFaults: true,
    });
    expect(done.code, done.stderr).toBe(0);

    const { manifest, lines } = await readJobOutput(output, 'crash-verify');
    const emails = lines
      .filter((l) => !['invalid', 'duplicate'].includes(String(l['status'])))
      .map((l) => String(l['email']));
    expect(emails.sort()).toEqual([...distinct].sort());
    expect(lines.filter((l) => l['status'] === 'error')).toHaveLength(0);

    // Every charged call has finished (a held answer enters the call record once it is sent or dropped).
    const paidCalls = () => env.sandbox.ledger.entries.slice(ledger0).filter((e) => e.path === PATHS.verifyBulk);
    await until(
      'every held answer to be sent or dropped',
      () => callsTo(env.sandbox, PATHS.verifyBulk, mark).filter((c) => c.credits > 0).length === paidCalls().length,
    );
    const calls = callsTo(env.sandbox, PATHS.verifyBulk, mark);
    const undelivered = calls.filter((c) => c.status === null);
    expect(undelivered.length).toBeGreaterThan(0);
    const lost = undelivered.reduce((sum, c) => sum + c.credits, 0);
    // Saved answers cost exactly the spec's price; the only extra is the answers the dead worker never received.
    expect(manifest.credits_charged).toBe(ideal.credits);
    expect(chargedSince(env.sandbox, mark)).toBe(ideal.credits + lost);
    // The answers lost are at most those of the calls in flight when the worker died (--concurrency), by the
    // sandbox's call record: each at most its chunk's addresses at 1 credit.
    expect(undelivered.length).toBeLessThanOrEqual(IN_FLIGHT);
    expect(lost).toBeLessThanOrEqual(IN_FLIGHT * BULK_EMAILS);
    // The manifest names every call that may have been paid without being saved, and no more than could be.
    const unknown = manifest.unsaved_answers!.unknown_calls;
    expect(unknown).toBeGreaterThanOrEqual(undelivered.length);
    expect(unknown).toBeLessThanOrEqual(IN_FLIGHT);
    // Calls: one per chunk, plus the chunks the dead worker had in flight.
    expect(calls.length).toBeLessThanOrEqual(ideal.calls + undelivered.length);
  });
});
