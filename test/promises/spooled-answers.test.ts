/**
 * Promise: an output that refuses a paid answer for good (a full disk) stops the job before its next paid call, and
 * the answer waits in the worker's spool; once the output takes writes again, running the job again publishes it
 * before any call, so each company or contact is paid once in all. For the jobs answered one call per row: companies
 * named without a website (by name, `POST /v1/companies/enrich`) and contacts (`POST /v1/contacts/enrich`). The calls
 * and credits are the sandbox's (its call record and truth), never the kit's own counts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SINGLE_BATCH_SIZE } from '../../activities/jobs/prepare.ts';
import type { JobResult } from '../../activities/jobs/types.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { VERIFY_CHUNK_SIZE } from '../../workflows/verify-emails.ts';
import { readJobOutput } from '../helpers/output.ts';
import { startRefusingWorker } from '../helpers/refusing-store.ts';
import { rejectionOf } from '../helpers/workflow-failure.ts';
import { addressList, runJob } from './helpers.ts';
import { callsTo, chargedSince, enrichIdeal, PATHS, verifyIdeal } from './oracle.ts';

const LIMIT = 3;
/** More rows than one batch holds: a second batch is left to pay for after the first one's answer is refused. */
const ROWS = SINGLE_BATCH_SIZE + 10;

/** A job answered one call per row: its first batch's calls, then the others'. */
const perRow = { rows: ROWS, firstCalls: SINGLE_BATCH_SIZE, calls: ROWS, options: { limit: LIMIT } };

/** The outputs holding answers: a lines part or a flat table's part. */
const isAnswerKey = (key: string) => /\/(parts|tables)\//.test(key);

describe('promise: an answer the output refused is not paid for again', () => {
  let env: JobEnv;
  let worker: WorkerHandle | undefined;
  let refusing = false;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 47 } });
    worker = await startRefusingWorker(env, 'spooled-answers-spool', isAnswerKey, () => refusing);
  });
  afterAll(async () => {
    await worker?.shutdown();
    await env?.stop();
    await removeTempDirs();
  });

  /**
   * Runs `workflow` on `csv` (`rows` rows) while the output refuses answers, then again once it takes them: the first
   * run makes the first batch's `firstCalls` calls to `path` and no other, the two runs `calls` in all (each item
   * once). Returns the re-run's output and what the sandbox charged; the caller compares them with its truth.
   */
  async function refusedThenRerun(
    workflow: string,
    jobId: string,
    csv: string,
    expected: { path: string; rows: number; firstCalls: number; calls: number; options?: object },
  ) {
    const { path, rows } = expected;
    const dir = await tempDir(jobId);
    await writeFile(join(dir, 'input.csv'), csv);
    const output = pathToFileURL(join(dir, 'out')).href;
    // One batch at a time, so that "the next paid call" is the second batch's first.
    const input = {
      jobId,
      input: pathToFileURL(join(dir, 'input.csv')).href,
      output,
      ...(expected.options ? { options: expected.options } : {}),
      concurrency: 1,
    };
    const mark = env.sandbox.truth.lastCall();

    refusing = true;
    const failure = await rejectionOf(runJob(env, workflow, input));
    refusing = false;
    expect(String((failure as { cause?: unknown } | undefined)?.cause)).toMatch(/refused \(ENOSPC\)/);
    // Stopped before the next paid call: the first batch's calls, none of the second's.
    expect(env.sandbox.truth.calls({ after: mark }).map((call) => call.path)).toEqual(
      Array(expected.firstCalls).fill(path),
    );

    const result: JobResult = await runJob(env, workflow, input);
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, jobId);
    expect(lines).toHaveLength(rows);
    // Each item paid once in all: the first batch's answers were published from the spool.
    expect(callsTo(env.sandbox, path, mark)).toHaveLength(expected.calls);
    expect(env.sandbox.truth.calls({ after: mark }).every((call) => call.path === path)).toBe(true);
    expect(manifest.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(manifest.unsaved_answers ?? { credits: 0, unknown_calls: 0 }).toEqual({ credits: 0, unknown_calls: 0 });
    return { manifest, lines, charged: chargedSince(env.sandbox, mark) };
  }

  it('companies named without a website: the refused batch is published from the spool, each paid once', async () => {
    const names = Array.from({ length: ROWS }, (_, i) => `Spooled Works ${i}`);
    const csv = `Record ID,Company name\n${names.map((name, i) => `s${i},${name}`).join('\n')}\n`;
    const { lines, charged } = await refusedThenRerun('bulkEnrich', 'spooled-singles', csv, {
      path: '/v1/companies/enrich',
      ...perRow,
    });
    const domains = names.map((name) => env.sandbox.truth.companyDomainOf({ company_name: name }));
    const ideal = enrichIdeal(
      env.sandbox,
      domains.filter((domain): domain is string => domain !== null),
      { limit: LIMIT },
    );
    expect(ideal.credits).toBeGreaterThan(0);
    expect(charged).toBe(ideal.credits);
    expect(lines.map((line) => line['record_id']).sort()).toEqual(names.map((_, i) => `s${i}`).sort());
  });

  it('contacts: the refused batch is published from the spool, each contact paid once', async () => {
    const emails = env.sandbox.truth
      .intentContacts({ topic_ids: ['b2b_901', 'b2b_902', 'b2b_903'] })
      .map((item) => item.contact.email?.toLowerCase())
      .filter((email, i, all): email is string => !!email && all.indexOf(email) === i)
      .slice(0, ROWS);
    expect(emails).toHaveLength(ROWS);
    const csv = `Record ID,Email\n${emails.map((email, i) => `p${i},${email}`).join('\n')}\n`;
    const { lines, charged } = await refusedThenRerun('enrichContacts', 'spooled-contacts', csv, {
      path: '/v1/contacts/enrich',
      ...perRow,
    });
    const ideal = env.sandbox.truth
      .contactSignals(emails)
      .reduce((sum, truth) => sum + 2 * Math.min(LIMIT, truth.signals.length), 0);
    expect(ideal).toBeGreaterThan(0);
    expect(charged).toBe(ideal);
    expect(lines.map((line) => line['record_id']).sort()).toEqual(emails.map((_, i) => `p${i}`).sort());
  });

  it('verify-emails: the refused chunk is published from the spool, each address paid once', async () => {
    const { rows, distinct } = addressList(VERIFY_CHUNK_SIZE + 10, 'spool');
    const csv = `Record ID,Email\n${rows.map((email, i) => `v${i},${email}`).join('\n')}\n`;
    const { lines, charged } = await refusedThenRerun('verifyEmails', 'spooled-verify', csv, {
      path: PATHS.verifyBulk,
      rows: rows.length,
      firstCalls: 1,
      calls: Math.ceil(distinct.length / VERIFY_CHUNK_SIZE),
    });
    const ideal = verifyIdeal(env.sandbox, distinct);
    expect(ideal.credits).toBeGreaterThan(0);
    expect(charged).toBe(ideal.credits);
    expect(new Set(lines.map((line) => line['record_id'])).size).toBe(rows.length);
  });
});
