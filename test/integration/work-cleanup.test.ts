/**
 * A completed job leaves no `work/` objects in the output (its batch files hold every input value, addresses in
 * clear); a job that did not complete keeps them, since running it again sends its failed batches from them.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { finalizeJob, findFinishedJob } from '../../activities/jobs/finalize.ts';
import { batchKey } from '../../activities/jobs/layout.ts';
import type { JobRef } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { addressList, runJob } from '../promises/helpers.ts';

/** Every file under `dir`, relative to it (hidden ones too). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describe('a completed job removes its work objects', () => {
  const ctx = useJobEnv('work-cleanup', { sandbox: { seed: 61 } });
  beforeAll(async () => {
    await ctx.env.startWorker();
  });

  it('enrichment: only the manifest and the parts stay', async () => {
    const { env, dir } = ctx;
    const domains = Array.from({ length: 230 }, (_, i) => `cleanup-${i}.com`);
    await writeFile(join(dir, 'domains.csv'), `domain\n${domains.join('\n')}\n`);
    const output = pathToFileURL(join(dir, 'enrich-out')).href;
    const result = await runJob<BulkEnrichInput>(env, 'bulkEnrich', {
      jobId: 'cleanup-enrich',
      input: pathToFileURL(join(dir, 'domains.csv')).href,
      output,
      options: { limit: 2 },
    });
    expect(result.status).toBe('completed');
    const files = await filesUnder(join(dir, 'enrich-out', 'cleanup-enrich'));
    expect(files.filter((file) => file.startsWith('work/'))).toEqual([]);
    expect(files).toContain('_manifest.json');
    expect(files.some((file) => file.startsWith('parts/part-00002'))).toBe(true);
  });

  it('verification: no address is left outside the parts', async () => {
    const { env, dir } = ctx;
    const { rows } = addressList(1_100, 'cleanup');
    await writeFile(join(dir, 'emails.csv'), `email\n${rows.join('\n')}\n`);
    const result = await runJob<VerifyEmailsInput>(env, 'verifyEmails', {
      jobId: 'cleanup-verify',
      input: pathToFileURL(join(dir, 'emails.csv')).href,
      output: pathToFileURL(join(dir, 'verify-out')).href,
    });
    expect(result.status).toBe('completed');
    const files = await filesUnder(join(dir, 'verify-out', 'cleanup-verify'));
    expect(files.filter((file) => file.startsWith('work/'))).toEqual([]);
  });

  it('a job that did not complete keeps them; once found finished, leftovers go', async () => {
    const { dir } = ctx;
    const output = pathToFileURL(join(dir, 'unit-out')).href;
    const store = openStore(output);
    const job: JobRef = { jobId: 'cleanup-unit', kind: 'enrich', output };
    await store.writeText(batchKey(job, 0), '{"v":"a.com","row":1,"raw":"a.com"}\n');
    const request = { job, input: 'x', startedAt: new Date().toISOString() };
    await finalizeJob(store, { ...request, status: 'failed', error: 'stopped' });
    expect(await store.exists(batchKey(job, 0))).toBe(true);
    await finalizeJob(store, { ...request, status: 'completed' });
    expect(await store.exists(batchKey(job, 0))).toBe(false);
    // A leftover (a worker that died between the manifest and the removal) goes when the job is found finished.
    await store.writeText(batchKey(job, 0), '{"v":"a.com","row":1,"raw":"a.com"}\n');
    expect(await findFinishedJob(store, { job })).not.toBeNull();
    expect(await store.exists(batchKey(job, 0))).toBe(false);
  });
});
