import { expect } from 'vitest';
import type { BenchResult, Size } from '../../bench/lib/types.ts';

/** What every benchmark result must look like: named, a rectangular table, every check passed. */
export function expectWellFormed(result: BenchResult, name: string): void {
  expect(result.name).toBe(name);
  expect(result.size).toBe('smoke');
  for (const row of result.table.rows) expect(row).toHaveLength(result.table.columns.length);
  expect(Object.entries(result.checks).filter(([, ok]) => !ok)).toEqual([]);
}

/** Runs a benchmark at smoke size without progress lines, checks it is well formed, and hands back its metrics. */
export async function runSmoke<M>(
  run: (size: Size, options: { log: (line: string) => void }) => Promise<BenchResult>,
  name: string,
): Promise<{ result: BenchResult; metrics: M }> {
  const result = await run('smoke', { log: () => {} });
  expectWellFormed(result, name);
  return { result, metrics: result.metrics as M };
}
