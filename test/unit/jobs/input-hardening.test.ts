/**
 * Inputs shaped to exhaust a worker: a long run of bad CSV rows (each once queued until the next good row), and
 * lines nested far deeper than any value (once a stack overflow while recording them as invalid).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidPartKey } from '../../../activities/jobs/layout.ts';
import { prepareInput } from '../../../activities/jobs/prepare.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { readPartLines } from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { MAX_SKIPPED_RAW, readCsvRecords } from '../../../connectors/jsonl.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-input-hardening-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A row with three fields under a one-column header: the parser skips every one of them. */
const badRow = (i: number) => `bad-${i},${'y'.repeat(80)},z\n`;

async function prepare(name: string, content: string) {
  const path = join(dir, name);
  await writeFile(path, content);
  const job: JobRef = { jobId: name.replace(/\W/g, '-'), kind: 'enrich', output: pathToFileURL(join(dir, 'out')).href };
  const env = new MockActivityEnvironment();
  const prepared = await env.run(prepareInput, openStore, { job, input: path, batchSize: 100 });
  const store = openStore(job.output);
  const invalid: Array<{ row: number; error: string; raw: unknown }> = [];
  for (let i = 0; await store.exists(invalidPartKey(job, i)); i++) {
    invalid.push(...(await readPartLines<{ row: number; error: string; raw: unknown }>(store, invalidPartKey(job, i))));
  }
  return { prepared, invalid };
}

describe('CSV: a long run of bad rows', () => {
  it('streams bad rows out as they come: what is read ahead of the consumer stays bounded', async () => {
    const rows = 30_000; // about 2.7 MB
    let produced = 0;
    async function* source() {
      produced += 'domain\n'.length;
      yield Buffer.from('domain\n');
      let chunk = '';
      for (let i = 1; i <= rows; i++) {
        chunk += badRow(i);
        if (chunk.length >= 16 * 1024) {
          produced += chunk.length;
          yield Buffer.from(chunk);
          chunk = '';
        }
      }
      produced += chunk.length;
      yield Buffer.from(chunk);
    }
    let consumed = 'domain\n'.length;
    let maxAhead = 0;
    let seen = 0;
    let misnumbered = 0;
    let notErrors = 0;
    for await (const entry of readCsvRecords(Readable.from(source()))) {
      seen++;
      if (entry.row !== seen) misnumbered++;
      if (!entry.error?.includes('Invalid Record Length')) notErrors++;
      consumed += badRow(seen).length;
      maxAhead = Math.max(maxAhead, produced - consumed);
    }
    expect({ seen, misnumbered, notErrors }).toEqual({ seen: rows, misnumbered: 0, notErrors: 0 });
    // Bounded by the stream buffers between the source and the consumer, not by the length of the run.
    expect(maxAhead).toBeLessThan(512 * 1024);
    expect(produced).toBeGreaterThan(2.5 * 1024 * 1024);
  });

  it('keeps at most MAX_SKIPPED_RAW characters of a bad row', async () => {
    const long = `${'x'.repeat(10_000)},a,b\n`;
    const entries = [];
    for await (const e of readCsvRecords(Readable.from([Buffer.from(`domain\nacme.com\n${long}globex.com\n`)]))) {
      entries.push(e);
    }
    expect(entries.map((e) => e.row)).toEqual([1, 2, 3]);
    expect(entries[1]?.raw?.length).toBe(MAX_SKIPPED_RAW);
    expect(entries[2]?.record).toEqual({ domain: 'globex.com' });
  });

  it('writes one invalid line per bad row, in order, good rows around them kept', async () => {
    const bad = 25_000;
    let csv = 'domain\nacme.com\n';
    for (let i = 1; i <= bad; i++) csv += badRow(i);
    csv += 'globex.com\n';
    const { prepared, invalid } = await prepare('many-bad.csv', csv);
    expect(prepared).toMatchObject({ rows: bad + 2, distinct: 2, invalid: bad });
    expect(invalid).toHaveLength(bad);
    expect(invalid.map((l) => l.row)).toEqual(Array.from({ length: bad }, (_, i) => i + 2));
  });
});

describe('JSONL: lines nested far too deep', () => {
  it('records a line nested 100,000 deep as invalid and goes on', async () => {
    const deepArray = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const deepField = `{"domain":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    const { prepared, invalid } = await prepare(
      'deep.jsonl',
      `{"domain":"acme.com"}\n${deepArray}\n${deepField}\n{"domain":"globex.com"}\n`,
    );
    expect(prepared).toMatchObject({ rows: 4, distinct: 2, invalid: 2 });
    expect(invalid.map((l) => [l.row, l.error])).toEqual([
      [2, 'nested deeper than 32 levels'],
      [3, 'nested deeper than 32 levels'],
    ]);
    // The raw line is kept as text, cut to a readable length.
    for (const line of invalid) expect(String(line.raw).length).toBeLessThan(1_100);
  });
});
