/**
 * Manifests the kit reads back (the dry run's history of earlier jobs, a job finding its own finished run) are only
 * believed when they are what the kit writes: an earlier review planted manifests with negative or string credits
 * (negative and absurd estimates), without `counts`, not JSON, nested 200,000 deep (crashes) and 400 MiB (16 s and
 * 1.3 GB to read). Each is now skipped with a note, never trusted, never a crash.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFinishedJob } from '../../../activities/jobs/finalize.ts';
import type { JobRef, Manifest } from '../../../activities/jobs/types.ts';
import { openStore } from '../../../config/storage.ts';
import { MANIFEST_READ_LIMIT_BYTES } from '../../../contract/manifest-read.ts';
import { dryRun } from '../../../library/dry-run.ts';
import type { JobStart } from '../../../library/jobs.ts';
import { completedJobManifest } from '../../helpers/job-manifest.ts';

let dir: string;
let output: string;
let input: string;

/** A manifest as the kit writes one: a completed enrich job of 10 distinct domains that cost 40 credits. */
const goodManifest = (jobId: string): Manifest => completedJobManifest(jobId, output);

async function plant(jobId: string, body: string | Buffer): Promise<void> {
  await openStore(output).writeText(`${jobId}/_manifest.json`, body.toString());
}

const enrich = (jobId: string): JobStart => ({
  workflow: 'bulkEnrich',
  input: { jobId, input, output, options: {} },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-manifest-readback-'));
  output = pathToFileURL(join(dir, 'out')).href;
  const rows = ['domain', ...Array.from({ length: 20 }, (_, i) => `shop${i}.com`)];
  await writeFile(join(dir, 'in.csv'), `${rows.join('\n')}\n`);
  input = pathToFileURL(join(dir, 'in.csv')).href;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the dry run reads earlier manifests only when they hold', () => {
  it('learns its rate from the valid manifest alone and names every one it skipped, and why', async () => {
    await plant('a-good', JSON.stringify(goodManifest('a-good')));
    await plant('b-negative', JSON.stringify({ ...goodManifest('b-negative'), credits_charged: -1_000_000 }));
    await plant('c-string', JSON.stringify({ ...goodManifest('c-string'), credits_charged: '1e308' }));
    const { counts: _counts, ...noCounts } = goodManifest('d-no-counts');
    await plant('d-no-counts', JSON.stringify(noCounts));
    await plant('e-not-json', 'this is not JSON {');
    // 200,000 levels of nesting, inside the filters the rate is matched on (a recursive walk overflows the stack).
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    await plant(
      'f-deep',
      JSON.stringify({ ...goodManifest('f-deep'), details: { options: {} } }).replace(
        '"options":{}',
        `"options":{"x":${deep}}`,
      ),
    );
    // Past the cap (the real case was 400 MiB; one byte over is the same path).
    const big = JSON.stringify({ ...goodManifest('g-big'), pad: 'x'.repeat(MANIFEST_READ_LIMIT_BYTES) });
    await plant('g-big', big);

    const report = await dryRun(enrich('next-job'), (url) => openStore(url));
    // 20 domains at the one valid job's rate of 4 credits per domain.
    expect(report.credits.expected).toBe(80);
    expect(report.credits.expectedBasis).toMatch(/1 earlier completed enrich job/);
    const skipped = new Map(report.skippedManifests.map((s) => [s.key, s.reason]));
    expect([...skipped.keys()].sort()).toEqual([
      'b-negative/_manifest.json',
      'c-string/_manifest.json',
      'd-no-counts/_manifest.json',
      'e-not-json/_manifest.json',
      'f-deep/_manifest.json',
      'g-big/_manifest.json',
    ]);
    expect(skipped.get('b-negative/_manifest.json')).toMatch(/credits_charged/);
    expect(skipped.get('c-string/_manifest.json')).toMatch(/credits_charged/);
    expect(skipped.get('d-no-counts/_manifest.json')).toMatch(/counts/);
    expect(skipped.get('e-not-json/_manifest.json')).toMatch(/not JSON/);
    expect(skipped.get('f-deep/_manifest.json')).toMatch(/nested/);
    expect(skipped.get('g-big/_manifest.json')).toMatch(/larger than/);
  });

  it("does not trust the job's own manifest when it is invalid: the estimate is the worst case, with a note", async () => {
    await plant('own-bad', JSON.stringify({ ...goodManifest('own-bad'), counts: { ok: -50 } }));
    const report = await dryRun(enrich('own-bad'), (url) => openStore(url));
    // Not "already completed" (0), not 20 - (-50) domains left.
    expect(report.credits.expected).toBeGreaterThan(0);
    expect(report.credits.expectedBasis).not.toMatch(/already completed/);
    expect(report.credits.expectedBasis).toMatch(/20 domains to answer/);
    expect(report.skippedManifests.map((s) => s.key)).toContain('own-bad/_manifest.json');
  });
});

describe('a job finds its own finished run only in a valid manifest', () => {
  const job = (jobId: string): JobRef => ({ jobId, kind: 'enrich', output });

  it('returns the finished result of a valid completed manifest', async () => {
    await plant('done-ok', JSON.stringify(goodManifest('done-ok')));
    const result = await findFinishedJob(openStore(output), { job: job('done-ok') });
    expect(result).toMatchObject({ status: 'completed', credits: 40, counts: { distinct: 10 } });
  });

  it('still finds a job finished by the release before (a schema_version 1 manifest, without output)', async () => {
    const { output: _output, ...older } = goodManifest('done-v1');
    await plant('done-v1', JSON.stringify({ ...older, schema_version: 1 }));
    const result = await findFinishedJob(openStore(output), { job: job('done-v1') });
    expect(result).toMatchObject({ status: 'completed', credits: 40 });
  });

  it.each([
    ['without counts', JSON.stringify({ ...goodManifest('x'), counts: undefined })],
    ['with string credits', JSON.stringify({ ...goodManifest('x'), credits_charged: 'lots' })],
    ['not JSON', '{"status": "completed"'],
    ['nested 200,000 deep', `{"status":"completed","counts":${'['.repeat(200_000)}${']'.repeat(200_000)}}`],
  ])(
    'treats a "completed" manifest %s as no finished run (the job runs) instead of returning it or crashing',
    async (name, body) => {
      const jobId = `done-${name.replace(/[^a-z]/g, '')}`;
      await plant(jobId, body);
      await expect(findFinishedJob(openStore(output), { job: job(jobId) })).resolves.toBeNull();
    },
  );

  it('treats a manifest past the size cap as no finished run, without reading it whole', async () => {
    await plant(
      'done-big',
      JSON.stringify({ ...goodManifest('done-big'), pad: 'x'.repeat(MANIFEST_READ_LIMIT_BYTES) }),
    );
    await expect(findFinishedJob(openStore(output), { job: job('done-big') })).resolves.toBeNull();
  });
});
