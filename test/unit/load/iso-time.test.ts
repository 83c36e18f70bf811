/** The Parquet reader's own ISO 8601 formatting writes every time exactly as Date's toISOString does. */
import { describe, expect, it } from 'vitest';
import { isoFromEpochMs } from '../../../loader/parquet-rows.ts';

describe('isoFromEpochMs', () => {
  it('matches toISOString across leap days, centuries and the edges of four-digit years', () => {
    const edges = [
      0,
      -1,
      -86_400_000,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(1900, 2, 1),
      Date.UTC(2100, 1, 28, 12),
      Date.UTC(2024, 11, 31, 23, 59, 59, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1, 0, 1),
    ];
    let seed = 7;
    const random = Array.from({ length: 20_000 }, () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * 2 ** 31 * 2_000) - 2 ** 31 * 500;
    });
    for (const ms of [...edges, ...random]) expect(isoFromEpochMs(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});
