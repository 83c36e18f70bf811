/**
 * A job id names a folder under the output: `a/parts` once put a job's parts inside job `a`'s parts folder (and
 * `a`'s manifest counted them), and `../..` was refused only after the workflow had started.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizeJob } from '../../../activities/jobs/finalize.ts';
import { partKey } from '../../../activities/jobs/layout.ts';
import { jobPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { writePart, zeroCounts } from '../../../activities/run/parts.ts';
import { UsageError } from '../../../cli/args.ts';
import { enrichJob, intentExportJob, verifyEmailsJob } from '../../../cli/commands/job-commands.ts';
import { openStore } from '../../../config/storage.ts';
import { removeTempDirs, tempDir } from '../../../testkit/drill-input.ts';
import { jobIdProblem } from '../../../workflows/job-id.ts';

const cliMain = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));
const BAD_IDS = ['a/parts', '../..', '..', '.hidden', 'a\\b', '', 'x'.repeat(129), 'a b', 'é'];

let dir: string;
beforeAll(async () => {
  dir = await tempDir('job-ids');
});
afterAll(removeTempDirs);

describe('job ids', () => {
  it('accept the ids the kit derives and ordinary names; refuse separators, dot segments and odd characters', () => {
    for (const ok of ['enrich-0123456789ab', 'nightly_2026-11-22', 'Job.7']) expect(jobIdProblem(ok)).toBeUndefined();
    for (const bad of BAD_IDS) expect(jobIdProblem(bad), bad).toMatch(/must be 1 to 128 letters/);
  });

  it.each(BAD_IDS.filter(Boolean))('--job-id %j is a usage error in every job command', (bad) => {
    const common = { output: './out', jobId: bad };
    expect(() => enrichJob({ input: 'in.csv', ...common })).toThrow(UsageError);
    expect(() => verifyEmailsJob({ input: 'in.csv', ...common })).toThrow(/--job-id: job id .* must be/);
    expect(() => intentExportJob({ topics: 'b2b_1', ...common })).toThrow(UsageError);
  });

  it('the CLI exits 2 with a message naming the flag, before reaching Temporal', async () => {
    const run = promisify(execFile);
    const err = await run(
      process.execPath,
      [cliMain, 'enrich', '--input', 'in.csv', '--output', dir, '--job-id', 'a/parts'],
      { env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' }, timeout: 30_000 },
    ).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/--job-id: job id "a\/parts" must be/);
  });

  it("a manifest counts only the job's own part-NNNNN objects, not objects nested under its parts folder", async () => {
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const a: JobRef = { jobId: 'a', kind: 'enrich', output };
    // What a job named `a/parts` wrote before ids were checked: its parts under a's parts folder.
    const nested: JobRef = { jobId: 'a/parts', kind: 'enrich', output };
    /** Part 0 of `job`, finished, holding one line. */
    const writeFirstPart = (job: JobRef, line: object, partCounts: ReturnType<typeof zeroCounts>) =>
      writePart(store, job.compression, partKey(job, 0), [line], partCounts, 'done', [], jobPartIdentity(job, 0));
    const counts = { ...zeroCounts(), lines: 1, ok: 1, credits: 2 };
    await writeFirstPart(a, { domain: 'acme.com' }, counts);
    await writeFirstPart(nested, { domain: 'evil.com' }, { ...counts, credits: 1000 });
    const result = await finalizeJob(store, {
      job: a,
      input: null,
      status: 'completed' as const,
      startedAt: new Date().toISOString(),
      prepared: { input: 'in.csv', rows: 1, distinct: 1, duplicates: 0, invalid: 0, batches: 1, batchSize: 100 },
    });
    expect(result.parts).toBe(1);
    expect(result.credits).toBe(2);
    expect(result.counts.lines).toBe(1);
  });
});
