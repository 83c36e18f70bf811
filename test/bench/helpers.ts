import { expect } from 'vitest';
import type { BenchResult } from '../../bench/lib/types.ts';

/** What every benchmark result must look like: named, a rectangular table, every check passed. */
export function expectWellFormed(result: BenchResult, name: string): void {
  expect(result.name).toBe(name);
  expect(result.size).toBe('smoke');
  expect(result.title.length).toBeGreaterThan(0);
  expect(result.table.rows.length).toBeGreaterThan(0);
  for (const row of result.table.rows) expect(row).toHaveLength(result.table.columns.length);
  expect(Object.keys(result.checks).length).toBeGreaterThan(0);
  expect(Object.entries(result.checks).filter(([, ok]) => !ok)).toEqual([]);
  expect(JSON.parse(JSON.stringify(result.metrics))).toBeTruthy();
}
