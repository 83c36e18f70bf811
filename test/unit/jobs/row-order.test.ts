/**
 * rows.csv lists a job's rows in input order, whatever order its parts answered them in, with bounded memory: the
 * rows gathered past a limit go to local disk and come back in order, and nothing is left on disk afterwards.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RowOrder } from '../../../activities/jobs/row-order.ts';
import { between, seeded } from '../../../testkit/random.ts';

describe('RowOrder', () => {
  it('gives 25,000 rows added in a shuffled order back in row order, most of them spilled to disk', async () => {
    const random = seeded(7);
    const rows = Array.from({ length: 25_000 }, (_, i) => i + 1);
    for (let i = rows.length - 1; i > 0; i--) {
      const j = between(random, 0, i);
      [rows[i], rows[j]] = [rows[j] as number, rows[i] as number];
    }
    const root = await mkdtemp(join(tmpdir(), 'signal-kit-row-order-'));
    const order = new RowOrder(64 * 1024, root);
    try {
      for (const row of rows) await order.add(row, `row ${row},"a, b"\r\nnext`);
      expect(await readdir(root)).toHaveLength(1);
      const out: string[] = [];
      for await (const text of order.inOrder()) out.push(text);
      expect(out).toEqual(Array.from({ length: 25_000 }, (_, i) => `row ${i + 1},"a, b"\r\nnext`));
    } finally {
      await order.close();
    }
    expect(await readdir(root)).toEqual([]);
    await rm(root, { recursive: true });
  });
});
