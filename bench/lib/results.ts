import { renderResult } from './format.ts';
import { describeMachine, type Machine } from './machine.ts';
import type { BenchResult } from './types.ts';

/** Every benchmark, in the order `bench/run.ts` runs them and RESULTS.md lists them. */
export const BENCHMARKS = [
  'enrich-throughput',
  'rate-limit-saturation',
  'export-streaming',
  'verify-scale',
  'webhook-intake',
  'push-incremental',
  'crm-sync-nightly',
  'postgres-load',
  'parquet-cost',
  'crm-write-back',
] as const;

const HEADER = `# Benchmark results

The latest \`full\` run of each benchmark, written by \`npm run bench\` (\`node bench/run.ts\`); see README.md for what
each one measures and how to run it. Every ratio compares two runs made in the same benchmark run on the machine
named in its section; absolute figures only compare on the same machine (and a shared machine's load is noted).
`;

/** Replaces (or appends) the section of one benchmark, keeping the others and their order. */
export function updateResultsMarkdown(current: string, result: BenchResult, m: Machine): string {
  const start = `<!-- bench:${result.name} -->`;
  const end = `<!-- /bench:${result.name} -->`;
  const section = [
    start,
    `## ${result.name}`,
    '',
    `Machine: ${describeMachine(m)}. Size \`${result.size}\`, ran ${Math.round(result.durationS)} s.`,
    '',
    renderResult(result),
    end,
  ].join('\n');
  const sections = new Map<string, string>();
  for (const match of current.matchAll(/<!-- bench:([\w-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g)) {
    sections.set(match[1]!, match[0]);
  }
  sections.set(result.name, section);
  const known = BENCHMARKS as readonly string[];
  const ordered = [...known.filter((n) => sections.has(n)), ...[...sections.keys()].filter((n) => !known.includes(n))];
  return `${HEADER}\n${ordered.map((n) => sections.get(n)).join('\n\n')}\n`;
}
