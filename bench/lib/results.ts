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
  'writeback-ledger',
] as const;

const HEADER = `# Benchmark results

The latest \`full\` run of each benchmark, written by \`npm run bench\` (\`node bench/run.ts\`); see README.md for what
each one measures and how to run it. Every ratio compares two runs made in the same benchmark run on the machine
named in its section; absolute figures only compare on the same machine (and a shared machine's load is noted).
`;

/**
 * Replaces the section of one benchmark (between its `<!-- bench:NAME -->` markers) and nothing else: hand-written
 * text outside every section stays as it is. A benchmark without a section yet gets one before the section of the
 * next benchmark in `BENCHMARKS` order that has one, else at the end.
 */
export function updateResultsMarkdown(current: string, result: BenchResult, m: Machine): string {
  const section = [
    sectionStart(result.name),
    `## ${result.name}`,
    '',
    `Machine: ${describeMachine(m)}. Size \`${result.size}\`, ran ${Math.round(result.durationS)} s.`,
    '',
    renderResult(result),
    sectionEnd(result.name),
  ].join('\n');
  const text = current.trim() === '' ? `${HEADER}\n` : current;
  const own = sectionRange(text, result.name);
  if (own) return text.slice(0, own.start) + section + text.slice(own.end);
  const known = BENCHMARKS as readonly string[];
  const later = known.includes(result.name) ? known.slice(known.indexOf(result.name) + 1) : [];
  const next = later.map((name) => sectionRange(text, name)).find((range) => range !== undefined);
  if (next) return `${text.slice(0, next.start)}${section}\n\n${text.slice(next.start)}`;
  return `${text.replace(/\n*$/, '')}\n\n${section}\n`;
}

const sectionStart = (name: string) => `<!-- bench:${name} -->`;
const sectionEnd = (name: string) => `<!-- /bench:${name} -->`;

/** Where a benchmark's section is in the text, its markers included. */
function sectionRange(text: string, name: string): { start: number; end: number } | undefined {
  const start = text.indexOf(sectionStart(name));
  if (start < 0) return undefined;
  const close = text.indexOf(sectionEnd(name), start);
  return close < 0 ? undefined : { start, end: close + sectionEnd(name).length };
}
