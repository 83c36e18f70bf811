/**
 * Drill: the disk holding a job's output fills up while the job runs, on a one-disk worker (its spool on that same
 * disk, as the state directory is on most servers). The job stops before its next paid call; every paid answer of
 * the batches in flight is kept (by the spool on disk, or in the worker's memory when its disk refuses too); the
 * failed run's last line and its manifest say what the sandbox charged for that run; and once space is freed, the
 * same command on the same worker pays for nothing again: over both runs the sandbox's ledger (the truth, never the
 * kit's manifest) holds exactly the credits of the distinct calls the input needs.
 *
 * The disk is a real file system: a small tmpfs mounted for the drill (the test runs as root, as CI does). It is
 * filled with a ballast file the moment the job's first part is saved, leaving less room than a part needs but
 * enough for the small objects (call markers, the manifest): a full disk refuses the big write first.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../testkit/cli-process.ts';
import { type DrillInput, removeTempDirs, tempDir, writeDomainsCsv } from '../../testkit/drill-input.ts';
import { fillDisk, mountSmallDisk, type SmallDisk } from '../../testkit/full-disk.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { enrichIdeal } from '../promises/oracle.ts';

const JOB = 'full-disk-drill';
const LIMIT = 5;
/** Ten batches, two in flight: the disk fills with several batches still to pay for. */
const DISTINCT = 1_000;

describe('drill: the output disk fills up mid-run', () => {
  let env: JobEnv;
  let worker: WorkerHandle | undefined;
  let dir: string;
  let disk: string;
  let small: SmallDisk | undefined;
  let input: DrillInput;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 53, faults: { latencyMs: 100 } } });
    dir = await tempDir('full-disk');
    small = mountSmallDisk(join(dir, 'disk'), '24m');
    disk = small.path;
    input = await writeDomainsCsv(dir, 'crm.csv', { distinct: DISTINCT, seed: 53, duplicates: 0 });
    worker = await env.startWorker({ spoolDir: join(disk, 'spool') });
  });
  afterAll(async () => {
    await worker?.shutdown();
    await env?.stop();
    small?.unmount();
    await removeTempDirs();
  });

  /** The job's lines parts saved so far, with their sizes. */
  async function savedParts(): Promise<string[]> {
    return (await readdir(join(disk, 'out', JOB, 'parts')).catch(() => [] as string[])).filter((name) =>
      /^part-\d+\.jsonl$/.test(name),
    );
  }

  it('the failed run says what it was charged, keeps every paid answer, and the re-run pays for nothing again', async () => {
    const output = pathToFileURL(join(disk, 'out')).href;
    const args = [
      'enrich',
      '--input',
      input.url,
      '--output',
      output,
      '--job-id',
      JOB,
      '--limit',
      String(LIMIT),
      '--concurrency',
      '2',
      '--compression',
      'none',
      // Flat tables too: written before their lines part, they may fit where the part no longer does.
      '--format',
      'csv,parquet',
      '--wait',
    ];
    const ideal = enrichIdeal(env.sandbox, [...input.distinct], { limit: LIMIT });
    expect(ideal.credits).toBeGreaterThan(0);
    const before = env.sandbox.ledger.total();

    const first = runCli(args, env.childEnv(), 240_000);
    await until('the first part to be saved', async () => (await savedParts()).length > 0, 120_000);
    const [firstPart] = await savedParts();
    const partBytes = (await readFile(join(disk, 'out', JOB, 'parts', firstPart!))).length;
    const ballast = await fillDisk(disk, Math.floor(partBytes / 2));
    const failed = await first;
    const chargedFirst = env.sandbox.ledger.total() - before;

    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/refused \(ENOSPC\)/);
    // Stopped before every batch was paid for.
    expect(chargedFirst).toBeLessThan(ideal.credits);
    // Its last line says what the sandbox charged for the run, and so does its manifest.
    const lastLine = failed.stderr.trim().split('\n').at(-1) ?? '';
    expect(lastLine).toMatch(/^signal-kit: credits charged \d+/);
    expect(Number(/credits charged (\d+)/.exec(lastLine)?.[1])).toBe(chargedFirst);
    // The progress it showed last counts them too, not only the batches that finished.
    const progress = failed.stderr
      .split('\n')
      .filter((line) => line.startsWith('{"event":"progress"'))
      .map((line) => JSON.parse(line) as { credits: number });
    expect(progress.at(-1)?.credits).toBe(chargedFirst);
    const manifest = JSON.parse(await readFile(join(disk, 'out', JOB, '_manifest.json'), 'utf8'));
    expect(manifest.status).toBe('failed');
    expect(manifest.credits_charged).toBe(chargedFirst);
    // Answers were paid for and refused (the drill reached them), each counted with what it cost.
    expect(manifest.unsaved_answers.credits).toBeGreaterThan(0);
    expect(manifest.unsaved_answers.unknown_calls).toBe(0);
    // No write left half a file in the spool.
    const spooled = await readdir(join(disk, 'spool'), { recursive: true });
    expect(spooled.filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // Space is freed; the same command again, on the same worker.
    await rm(ballast);
    const again = await runCli(args, env.childEnv(), 240_000);
    expect(again.code, again.stderr).toBe(0);
    const total = env.sandbox.ledger.total() - before;
    // Each distinct domain paid once over both runs: the kept answers were published, not bought again.
    expect(total).toBe(ideal.credits);
    const done = JSON.parse(await readFile(join(disk, 'out', JOB, '_manifest.json'), 'utf8'));
    expect(done.status).toBe('completed');
    expect(done.counts.ok + done.counts.not_found).toBe(DISTINCT);
    expect(done.credits_charged).toBe(total);
    expect(done.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
  });
});
