/**
 * Runs the benchmarks: all of them, or those named.
 *
 *   node bench/run.ts [NAME ...] [--size full|smoke] [--profile DIR] [--list]   (npm run bench -- ... builds first)
 *
 * `--profile DIR`: every child process (workers, baseline scripts) writes a V8 CPU profile into DIR on exit;
 * `node bench/profile.ts DIR/*.cpuprofile` says where the time went.
 *
 * Each prints its table, writes `bench/results/<name>-<size>-<time>.json` and `bench/results/<name>-<size>.json`
 * (the latest), and a `full` run replaces its own section of `bench/RESULTS.md` (the other sections stay).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderResult } from './lib/format.ts';
import { describeMachine, machine } from './lib/machine.ts';
import { BENCHMARKS as NAMES, updateResultsMarkdown } from './lib/results.ts';
import type { Benchmark, BenchResult, Size } from './lib/types.ts';

async function load(name: string): Promise<Benchmark> {
  const module = (await import(`./${name}.ts`)) as { benchmark: Benchmark };
  return module.benchmark;
}

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
const resultsMd = fileURLToPath(new URL('./RESULTS.md', import.meta.url));

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      size: { type: 'string', default: 'full' },
      list: { type: 'boolean', default: false },
      profile: { type: 'string' },
    },
  });
  if (values.profile) {
    await mkdir(values.profile, { recursive: true });
    process.env['SIGNAL_KIT_BENCH_PROFILE_DIR'] = values.profile;
  }
  if (values.list) {
    for (const name of NAMES) console.log(`${name.padEnd(24)}${(await load(name)).description}`);
    return 0;
  }
  const size = values.size as Size;
  if (size !== 'full' && size !== 'smoke') {
    console.error(`bench: --size must be full or smoke, got "${values.size}"`);
    return 2;
  }
  const unknown = positionals.filter((name) => !(NAMES as readonly string[]).includes(name));
  if (unknown.length) {
    console.error(`bench: unknown benchmark ${unknown.join(', ')} (known: ${NAMES.join(', ')})`);
    return 2;
  }
  const selected = positionals.length ? NAMES.filter((name) => positionals.includes(name)) : [...NAMES];
  await mkdir(resultsDir, { recursive: true });
  const m = machine();
  console.log(`Machine: ${describeMachine(m)}\n`);
  let failures = 0;
  for (const name of selected) {
    const benchmark = await load(name);
    const before = machine();
    let result: BenchResult;
    try {
      result = await benchmark.run(size);
    } catch (error) {
      failures += 1;
      console.error(
        `bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      continue;
    }
    console.log(`## ${name}\n\n${renderResult(result)}\n`);
    const json = `${JSON.stringify({ machine: before, ...result }, null, 2)}\n`;
    const stamp = result.startedAt.replace(/[:.]/g, '-');
    await writeFile(`${resultsDir}${name}-${size}-${stamp}.json`, json);
    await writeFile(`${resultsDir}${name}-${size}.json`, json);
    if (size === 'full') {
      const current = await readFile(resultsMd, 'utf8').catch(() => '');
      await writeFile(resultsMd, updateResultsMarkdown(current, result, before));
    }
    if (Object.values(result.checks).some((ok) => !ok)) failures += 1;
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
