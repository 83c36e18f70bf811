/** The benchmark harness's own pieces: statistics, windows, the RESULTS.md section update, tables. */
import { describe, expect, it } from 'vitest';
import { markdownTable } from '../../bench/lib/format.ts';
import { machine } from '../../bench/lib/machine.ts';
import { updateResultsMarkdown } from '../../bench/lib/results.ts';
import { median, quantile } from '../../bench/lib/stats.ts';
import type { BenchResult } from '../../bench/lib/types.ts';
import { maxInWindow } from '../../testkit/api-proxy.ts';

const result = (name: string, value: number): BenchResult => ({
  name,
  size: 'full',
  title: `${name} title`,
  startedAt: new Date(0).toISOString(),
  durationS: 1,
  table: { columns: ['a', 'b'], rows: [['x', value]] },
  metrics: {},
  checks: { ok: true },
  notes: ['a note'],
});

describe('bench harness', () => {
  it('computes medians and quantiles', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(quantile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.99)).toBe(10);
    expect(Number.isNaN(median([]))).toBe(true);
  });

  it('finds the busiest sliding window', () => {
    expect(maxInWindow([0, 10, 20, 1000, 1005], 1000)).toBe(4); // 10 … 1005
    expect(maxInWindow([0, 999, 1000], 1000)).toBe(2);
    expect(maxInWindow([], 1000)).toBe(0);
  });

  it('replaces one section of RESULTS.md and keeps the others in order', () => {
    const m = machine();
    const first = updateResultsMarkdown('', result('verify-scale', 1), m);
    const second = updateResultsMarkdown(first, result('enrich-throughput', 2), m);
    const third = updateResultsMarkdown(second, result('verify-scale', 3), m);
    expect(third.indexOf('## enrich-throughput')).toBeLessThan(third.indexOf('## verify-scale'));
    expect(third).toContain('| x | 3 |');
    expect(third).not.toContain('| x | 1 |');
    expect(third).toContain('| x | 2 |');
    expect(third.match(/<!-- bench:verify-scale -->/g)).toHaveLength(1);
  });

  it('keeps hand-written text outside the sections of RESULTS.md', () => {
    const m = machine();
    const first = updateResultsMarkdown('', result('verify-scale', 1), m);
    const written = `${first}\n## Before and after the run core\n\nWritten by hand.\n`;
    const noted = written.replace('<!-- bench:verify-scale -->', 'A note above.\n\n<!-- bench:verify-scale -->');
    const next = updateResultsMarkdown(updateResultsMarkdown(noted, result('verify-scale', 2), m), result('x', 3), m);
    expect(next).toContain('## Before and after the run core\n\nWritten by hand.');
    expect(next).toContain('A note above.\n\n<!-- bench:verify-scale -->');
    expect(next).toContain('| x | 2 |');
    expect(next).not.toContain('| x | 1 |');
    expect(next.indexOf('<!-- bench:x -->')).toBeGreaterThan(next.indexOf('Written by hand.'));
  });

  it('renders a markdown table with right-aligned figures', () => {
    expect(markdownTable({ columns: ['run', 'n'], rows: [['a|b', 1]] })).toBe(
      '| run | n |\n| --- | ---: |\n| a\\|b | 1 |',
    );
  });
});
