/**
 * A job starts calling the API before its whole input is prepared: `prepareInputStart` writes the first batches, the
 * very files the whole preparation writes, and leaves the rest; an input that ends before them is prepared whole.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchKey, preparedKey } from '../../../activities/jobs/layout.ts';
import { prepareInput, prepareInputStart } from '../../../activities/jobs/prepare.ts';
import type { JobRef, PreparedInput } from '../../../activities/jobs/types.ts';
import { openStore } from '../../../config/storage.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-prepare-start-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** 2,000 rows: every third a repeat of an earlier domain, every seventh not a domain at all. */
function csv(rows: number): string {
  let text = 'domain\n';
  for (let i = 1; i <= rows; i++) {
    if (i % 7 === 0) text += 'not a domain\n';
    else if (i % 3 === 0) text += `company-${i - 1}.com\n`;
    else text += `company-${i}.com\n`;
  }
  return text;
}

async function batchTexts(job: JobRef, count: number): Promise<string[]> {
  const store = openStore(job.output);
  const texts: string[] = [];
  for (let i = 0; i < count; i++) texts.push(await store.readText(batchKey(job, i)));
  return texts;
}

describe('prepareInputStart', () => {
  it('writes the first batches exactly as the whole preparation does, and leaves the rest to it', async () => {
    const input = join(dir, 'big.csv');
    await writeFile(input, csv(2_000));
    const env = new MockActivityEnvironment();
    const out = (name: string) => pathToFileURL(join(dir, name)).href;
    const early: JobRef = { jobId: 'early', kind: 'enrich', output: out('early') };
    const start = await env.run(prepareInputStart, openStore, { job: early, input, batchSize: 100, batches: 4 });
    expect(start).toEqual({ complete: false, batches: 4 });
    const store = openStore(early.output);
    expect(await store.exists(batchKey(early, 4))).toBe(false);
    expect(await store.exists(preparedKey(early))).toBe(false);

    const whole: JobRef = { jobId: 'whole', kind: 'enrich', output: out('whole') };
    const prepared = (await env.run(prepareInput, openStore, { job: whole, input, batchSize: 100 })) as PreparedInput;
    expect(prepared.batches).toBeGreaterThan(4);
    expect(await batchTexts(early, 4)).toEqual(await batchTexts(whole, 4));
  });

  it('prepares a small input whole, as prepareInput would', async () => {
    const input = join(dir, 'small.csv');
    await writeFile(input, csv(200));
    const env = new MockActivityEnvironment();
    const job: JobRef = { jobId: 'small', kind: 'enrich', output: pathToFileURL(join(dir, 'small')).href };
    const start = await env.run(prepareInputStart, openStore, { job, input, batchSize: 100, batches: 16 });
    // 200 rows: 28 not domains, and of the rest every third repeats the row before it.
    expect(start).toMatchObject({ rows: 200, invalid: 28, batches: 2 });
    expect(await openStore(job.output).exists(preparedKey(job))).toBe(true);
  });
});
