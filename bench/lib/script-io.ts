/**
 * The command line and the report of the stand-alone scripts a benchmark runs in a child process (the baselines and
 * the activities loop), so that every side is started and measured the same way.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

/** The arguments of an enrichment script: a CSV in, an output, the API, and how many calls in flight. */
export interface EnrichScriptArgs {
  input: string;
  output: string;
  url: string;
  key: string;
  concurrency: number;
  /** The CSV column holding the domains. */
  column: string;
  report: string | undefined;
}

/** Parses an enrichment script's arguments, or prints its usage and exits 2 when one is missing. */
export function parseEnrichScriptArgs(script: string): EnrichScriptArgs {
  const { values } = parseArgs({
    options: {
      input: { type: 'string' },
      output: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      column: { type: 'string', default: 'domain' },
      report: { type: 'string' },
    },
  });
  const { input, output, url, key } = values;
  if (!input || !output || !url || !key) {
    console.error(`usage: ${script} --input CSV --output OUT --url URL --key KEY [--concurrency N] [--report FILE]`);
    process.exit(2);
  }
  return {
    input,
    output,
    url,
    key,
    concurrency: Number(values.concurrency),
    column: values.column,
    report: values.report,
  };
}

/** Writes a script's report (its counts plus its own peak memory and CPU time) to `path`, or to stdout without one. */
export async function writeScriptReport(path: string | undefined, counts: Record<string, unknown>): Promise<void> {
  const usage = process.resourceUsage();
  const report = JSON.stringify({
    ...counts,
    maxRssKb: usage.maxRSS,
    cpuS: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
  });
  if (path) await writeFile(path, report);
  else console.log(report);
}
