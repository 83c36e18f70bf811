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

/**
 * Reads a script's `--name value` flags: each of `required` must be given; each of `defaults` may be, and is its
 * default otherwise (none where the default is undefined). A missing one prints `usage: <usage>` and exits 2.
 */
export function parseScriptFlags<R extends string, D extends Record<string, string | undefined>>(
  usage: string,
  required: readonly R[],
  defaults: D,
): { [K in R]: string } & { [K in keyof D]: D[K] extends string ? string : string | undefined } {
  const options: Record<string, { type: 'string'; default?: string }> = {};
  for (const name of required) options[name] = { type: 'string' };
  for (const [name, value] of Object.entries(defaults))
    options[name] = value === undefined ? { type: 'string' } : { type: 'string', default: value };
  const { values } = parseArgs({ options });
  if (required.some((name) => !values[name])) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return values as { [K in R]: string } & { [K in keyof D]: D[K] extends string ? string : string | undefined };
}

/** Parses an enrichment script's arguments, or prints its usage and exits 2 when one is missing. */
export function parseEnrichScriptArgs(script: string): EnrichScriptArgs {
  const values = parseScriptFlags(
    `${script} --input CSV --output OUT --url URL --key KEY [--concurrency N] [--report FILE]`,
    ['input', 'output', 'url', 'key'],
    { concurrency: '8', column: 'domain', report: undefined },
  );
  return { ...values, concurrency: Number(values.concurrency) };
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
