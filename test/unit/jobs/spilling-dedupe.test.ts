/**
 * First occurrences of a job's values: the same answer whether they fit the in-memory Set or spill to bucket files
 * on disk (duplicates on both sides of the spill, in other buckets, at the very end), in input order.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpillingDedupe } from '../../../activities/jobs/spilling-dedupe.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-spilling-dedupe-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `values` (row = index + 1) through SpillingDedupe: the kept rows in the order they come out, and duplicates. */
async function keep(values: string[], options: { memoryLimit: number; buckets: number }) {
  const seen = new SpillingDedupe({ ...options, tmpDir: dir });
  const kept: number[] = [];
  let duplicates = 0;
  /** Each duplicate row → the row of its value's first occurrence, as SpillingDedupe told it. */
  const firstOf = new Map<number, number>();
  try {
    for (const [i, value] of values.entries()) {
      const verdict = await seen.add(value, i + 1, () => JSON.stringify({ v: value, row: i + 1 }));
      if (verdict === 'new') kept.push(i + 1);
      if (verdict === 'duplicate') {
        duplicates += 1;
        firstOf.set(i + 1, seen.firstOrder(value) ?? -1);
      }
    }
    const onDuplicate = async (first: number, line: string) => {
      firstOf.set((JSON.parse(line) as { row: number }).row, first);
    };
    for await (const line of seen.drain(onDuplicate)) kept.push((JSON.parse(line) as { row: number }).row);
    duplicates += seen.deferredDuplicates;
  } finally {
    await seen.close();
  }
  return { kept, duplicates, firstOf };
}

/** Each repeated row → the row where its value first occurs. */
function expectedFirsts(values: string[]): Map<number, number> {
  const first = new Map<string, number>();
  const out = new Map<number, number>();
  values.forEach((value, i) => {
    const at = first.get(value);
    if (at === undefined) first.set(value, i + 1);
    else out.set(i + 1, at);
  });
  return out;
}

/** The rows of each value's first occurrence, in input order. */
function firstRows(values: string[]): number[] {
  const rows = new Map<string, number>();
  values.forEach((value, i) => {
    if (!rows.has(value)) rows.set(value, i + 1);
  });
  return [...rows.values()];
}

describe('SpillingDedupe', () => {
  const values = Array.from({ length: 2_000 }, (_, i) => `user${(i * 7919) % 1_300}@example.com`);
  values.push('user5@example.com', 'tab\there@example.com', 'quote"d@example.com', 'tab\there@example.com');

  it('keeps each value once, at its first row, in input order, without spilling', async () => {
    const { kept, duplicates } = await keep(values, { memoryLimit: 10_000, buckets: 4 });
    expect(kept).toEqual(firstRows(values));
    expect(duplicates).toBe(values.length - firstRows(values).length);
  });

  it('gives the same answer when all but the first values are sorted out on disk', async () => {
    const { kept, duplicates, firstOf } = await keep(values, { memoryLimit: 50, buckets: 7 });
    expect(kept).toEqual(firstRows(values));
    expect(duplicates).toBe(values.length - firstRows(values).length);
    // Every duplicate knows its first row, whether decided in memory or on disk (what `duplicate_of` comes from).
    expect(new Map([...firstOf].sort((a, b) => a[0] - b[0]))).toEqual(expectedFirsts(values));
    expect(await readdir(dir)).toEqual([]);
  });

  it('spills at the first value already (a limit of one)', async () => {
    const few = ['a', 'b', 'a', 'c', 'b', 'd', 'a'];
    const { kept, duplicates } = await keep(few, { memoryLimit: 1, buckets: 3 });
    expect(kept).toEqual([1, 2, 4, 6]);
    expect(duplicates).toBe(3);
  });
});
