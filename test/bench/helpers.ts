import { expect } from 'vitest';
import type { BenchResult } from '../../bench/lib/types.ts';

/** What every benchmark result must look like: named, a rectangular table, every check passed. */
export function expectWellFormed(result: BenchResult, name: string): void {
  expect(result.name).toBe(name);
  expect(result.size).toBe('smoke');
  for (const row of result.table.rows) expect(row).toHaveLength(result.table.columns.length);
  expect(Object.entries(result.checks).filter(([, ok]) => !ok)).toEqual([]);
}
