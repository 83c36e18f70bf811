/**
 * A part already in the output is reused only when it proves itself: its metadata names this job, these options and
 * this batch, and its bytes have the size, line count and sha256 it recorded. An earlier review completed a job with
 * 0 calls on a part of garbage behind a copied sidecar, reused a `limit: 5` part in a `limit: 1` job, counted a stray
 * `part-00042` in a one-batch job, and hung a job on a sidecar whose counts were `null` or not JSON at all.
 * Real Temporal dev server, in-process worker, file:// output; calls and credits from the sandbox's own record.
 */

import { createHash } from 'node:crypto';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { readJobOutput } from '../helpers/output.ts';
import { callsTo, chargedSince, enrichIdeal, PATHS } from '../promises/oracle.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const DOMAINS = Array.from({ length: 30 }, (_, i) => `trusted${i}.com`);
/** Two bulk batches (100 and 50 domains). */
const TWO_BATCHES = Array.from({ length: 150 }, (_, i) => `twobatch${i}.com`);
const EMAILS = Array.from({ length: 20 }, (_, i) => `person${i}@example.com`);
/** A job that does not end in this long is stuck (a sidecar once made every workflow task fail). */
const STUCK_MS = 60_000;

const ctx = useJobEnv('part-trust', { sandbox: { seed: 11, clock: () => CLOCK } });
let domainsUrl: string;
let emailsUrl: string;
let twoBatchesUrl: string;
let output: string;
let outDir: string;

beforeAll(async () => {
  await ctx.env.startWorker();
  await writeFile(join(ctx.dir, 'domains.csv'), `domain\n${DOMAINS.join('\n')}\n`);
  await writeFile(join(ctx.dir, 'emails.csv'), `email\n${EMAILS.join('\n')}\n`);
  domainsUrl = pathToFileURL(join(ctx.dir, 'domains.csv')).href;
  emailsUrl = pathToFileURL(join(ctx.dir, 'emails.csv')).href;
  await writeFile(join(ctx.dir, 'two-batches.csv'), `domain\n${TWO_BATCHES.join('\n')}\n`);
  twoBatchesUrl = pathToFileURL(join(ctx.dir, 'two-batches.csv')).href;
  outDir = join(ctx.dir, 'out');
  output = pathToFileURL(outDir).href;
});

/** Runs a job to its end, or fails the test (and stops the job) when it does not end within STUCK_MS. */
async function run(workflow: string, input: Record<string, unknown> & { jobId: string }): Promise<JobResult> {
  const c = ctx.env.config();
  const workflowId = `${input.jobId}-${Math.random().toString(36).slice(2, 8)}`;
  const handle = await ctx.env.client.workflow.start(workflow, {
    workflowId,
    taskQueue: c.taskQueue,
    args: [{ output, ...input, taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
  });
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`job ${input.jobId} did not end within ${STUCK_MS} ms`)), STUCK_MS);
  });
  try {
    return await Promise.race([handle.result() as Promise<JobResult>, stuck]);
  } catch (error) {
    await handle.terminate('stuck in a test').catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const partPath = (jobId: string, index: number, ext = '.jsonl.gz') =>
  join(outDir, jobId, 'parts', `part-${String(index).padStart(5, '0')}${ext}`);
/** The file store keeps an object's metadata in a sidecar beside it. */
const sidecarOf = (path: string) => join(path, '..', `.${path.split('/').at(-1)}.sk-meta.json`);

/** Forgets that the job finished (its manifest), so that running it again goes back to its parts. */
async function forgetFinished(jobId: string): Promise<void> {
  await rm(join(outDir, jobId, '_manifest.json'), { force: true });
  await rm(join(outDir, jobId, '_job.json'), { force: true });
}

const enrichCalls = (mark: number) => callsTo(ctx.env.sandbox, PATHS.enrichBulk, mark).length;
const verifyCalls = (mark: number) => callsTo(ctx.env.sandbox, PATHS.verifyBulk, mark).length;
const mark = () => ctx.env.sandbox.truth.lastCall();
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every manifested part's recorded size and sha256 are those of its bytes in the bucket. */
async function expectManifestTrue(jobId: string): Promise<void> {
  const { manifest } = await readJobOutput(output, jobId);
  for (const part of manifest.parts) {
    const bytes = await readFile(join(outDir, part.key));
    expect(part.bytes, part.key).toBe(bytes.length);
    expect(part.sha256, part.key).toBe(sha256(bytes));
  }
}

describe('a part is reused only when it proves itself', { timeout: 180_000 }, () => {
  const enrichJob = (jobId: string, limit = 2) => ({ jobId, input: domainsUrl, options: { limit } });

  it.each([
    [
      'garbage bytes behind its real sidecar',
      async (path: string) => writeFile(path, gzipSync('{"x":1}\n'.repeat(30))),
    ],
    [
      'its real bytes with a sidecar that claims another sha256',
      async (path: string) => {
        const meta = JSON.parse(await readFile(sidecarOf(path), 'utf8')) as Record<string, string>;
        await writeFile(sidecarOf(path), JSON.stringify({ ...meta, 'signal-kit-sha256': '0'.repeat(64) }));
      },
    ],
    [
      'a sidecar whose counts are null',
      async (path: string) => {
        const meta = JSON.parse(await readFile(sidecarOf(path), 'utf8')) as Record<string, string>;
        await writeFile(sidecarOf(path), JSON.stringify({ ...meta, 'signal-kit-counts': 'null' }));
      },
    ],
    [
      'a sidecar with counts of the wrong type',
      async (path: string) => {
        const meta = JSON.parse(await readFile(sidecarOf(path), 'utf8')) as Record<string, string>;
        const counts = JSON.parse(meta['signal-kit-counts'] ?? '{}') as Record<string, unknown>;
        await writeFile(
          sidecarOf(path),
          JSON.stringify({ ...meta, 'signal-kit-counts': JSON.stringify({ ...counts, lines: '30', credits: -5 }) }),
        );
      },
    ],
    ['a sidecar that is not JSON', async (path: string) => writeFile(sidecarOf(path), 'not json {')],
  ])('enrich: a part with %s is redone once, and the manifest says so', async (_name, spoil) => {
    const jobId = `spoiled-${Math.random().toString(36).slice(2, 8)}`;
    const first = mark();
    await run('bulkEnrich', enrichJob(jobId));
    expect(enrichCalls(first)).toBe(1);

    await forgetFinished(jobId);
    await spoil(partPath(jobId, 0));
    const before = mark();
    const result = await run('bulkEnrich', enrichJob(jobId));
    // The batch was sent again (once) and its answer is what the output holds.
    expect(enrichCalls(before)).toBe(1);
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, jobId);
    expect(lines.map((line) => line['domain']).sort()).toEqual([...DOMAINS].sort());
    expect(manifest.counts.lines).toBe(DOMAINS.length);
    const ideal = enrichIdeal(ctx.env.sandbox, DOMAINS, { limit: 2 });
    expect(manifest.credits_charged).toBe(ideal.credits);
    expect(chargedSince(ctx.env.sandbox, before)).toBe(ideal.credits);
    await expectManifestTrue(jobId);
    const redone = manifest.details?.['redone_parts'] as { key: string; reason: string }[] | undefined;
    expect(redone?.map((r) => r.key)).toEqual([`${jobId}/parts/part-00000.jsonl.gz`]);
    expect(redone?.[0]?.reason).toBeTruthy();

    // Redone once: the new part proves itself, so a third run pays nothing.
    await forgetFinished(jobId);
    const third = mark();
    await run('bulkEnrich', enrichJob(jobId));
    expect(enrichCalls(third)).toBe(0);
  });

  it('verify-emails: a part of garbage behind its real sidecar is redone, not counted', async () => {
    const jobId = `spoiled-verify-${Math.random().toString(36).slice(2, 8)}`;
    await run('verifyEmails', { jobId, input: emailsUrl });
    await forgetFinished(jobId);
    await writeFile(partPath(jobId, 0), gzipSync('{"x":1}\n'.repeat(20)));
    const before = mark();
    const result = await run('verifyEmails', { jobId, input: emailsUrl });
    expect(verifyCalls(before)).toBe(1);
    const { manifest, lines } = await readJobOutput(output, jobId);
    expect(lines.map((line) => line['email']).sort()).toEqual([...EMAILS].sort());
    expect(result.summary?.total).toBe(EMAILS.length);
    expect(manifest.credits_charged).toBe(chargedSince(ctx.env.sandbox, before));
    await expectManifestTrue(jobId);
  });

  it('a part written under other options (limit 5) is not reused by the job under limit 1', async () => {
    const jobId = `limits-${Math.random().toString(36).slice(2, 8)}`;
    await run('bulkEnrich', enrichJob(jobId, 5));
    await forgetFinished(jobId);
    const before = mark();
    await run('bulkEnrich', enrichJob(jobId, 1));
    expect(enrichCalls(before)).toBe(1);
    const { manifest, lines } = await readJobOutput(output, jobId);
    const ideal = enrichIdeal(ctx.env.sandbox, DOMAINS, { limit: 1 });
    for (const line of lines) {
      const ids = ((line['signals'] as { signal_id: string }[] | undefined) ?? []).map((s) => s.signal_id);
      expect(ids, String(line['domain'])).toEqual(ideal.signalIds.get(String(line['domain'])) ?? []);
    }
    expect(manifest.credits_charged).toBe(ideal.credits);
  });

  it('a stray part past the batch count (part-00042 in a one-batch job) is neither counted nor manifested', async () => {
    const jobId = `stray-${Math.random().toString(36).slice(2, 8)}`;
    await run('bulkEnrich', enrichJob(jobId));
    const ideal = enrichIdeal(ctx.env.sandbox, DOMAINS, { limit: 2 });
    // A copy of the job's own genuine part and sidecar, under a batch index the job does not have.
    await copyFile(partPath(jobId, 0), partPath(jobId, 42));
    await copyFile(sidecarOf(partPath(jobId, 0)), sidecarOf(partPath(jobId, 42)));
    await forgetFinished(jobId);
    const before = mark();
    await run('bulkEnrich', enrichJob(jobId));
    expect(enrichCalls(before)).toBe(0);
    const { manifest } = await readJobOutput(output, jobId);
    expect(manifest.parts.map((p) => p.key)).toEqual([`${jobId}/parts/part-00000.jsonl.gz`]);
    expect(manifest.counts.lines).toBe(DOMAINS.length);
    expect(manifest.credits_charged).toBe(ideal.credits);
  });

  it("another job's genuine part copied into this job's folder is redone", async () => {
    const donor = `donor-${Math.random().toString(36).slice(2, 8)}`;
    const jobId = `taker-${Math.random().toString(36).slice(2, 8)}`;
    await run('bulkEnrich', enrichJob(donor));
    await run('bulkEnrich', enrichJob(jobId));
    await forgetFinished(jobId);
    await copyFile(partPath(donor, 0), partPath(jobId, 0));
    await copyFile(sidecarOf(partPath(donor, 0)), sidecarOf(partPath(jobId, 0)));
    const before = mark();
    await run('bulkEnrich', enrichJob(jobId));
    expect(enrichCalls(before)).toBe(1);
  });

  it("the job's own genuine part of batch 0 copied over batch 1's slot is redone: one call, for batch 1's domains", async () => {
    const jobId = `slot-${Math.random().toString(36).slice(2, 8)}`;
    const job = { jobId, input: twoBatchesUrl, options: { limit: 2 } };
    const first = mark();
    await run('bulkEnrich', job);
    expect(enrichCalls(first)).toBe(2);
    const batchOne = new Set(
      callsTo(ctx.env.sandbox, PATHS.enrichBulk, first)
        .map((call) => (call.asked as { domains: string[] }).domains)
        .find((domains) => !domains.includes(TWO_BATCHES[0]!)),
    );

    await forgetFinished(jobId);
    await copyFile(partPath(jobId, 0), partPath(jobId, 1));
    await copyFile(sidecarOf(partPath(jobId, 0)), sidecarOf(partPath(jobId, 1)));
    const before = mark();
    const result = await run('bulkEnrich', job);
    const calls = callsTo(ctx.env.sandbox, PATHS.enrichBulk, before);
    expect(calls).toHaveLength(1);
    expect(new Set((calls[0]!.asked as { domains: string[] }).domains)).toEqual(batchOne);
    expect(chargedSince(ctx.env.sandbox, before)).toBe(
      enrichIdeal(ctx.env.sandbox, [...batchOne], { limit: 2 }).credits,
    );
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, jobId);
    expect(lines.map((line) => line['domain']).sort()).toEqual([...TWO_BATCHES].sort());
    expect(manifest.credits_charged).toBe(enrichIdeal(ctx.env.sandbox, TWO_BATCHES, { limit: 2 }).credits);
    await expectManifestTrue(jobId);
  });
});
