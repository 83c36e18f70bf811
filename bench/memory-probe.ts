/**
 * Where a worker's memory goes during enrichment (a diagnostic, not a benchmark): one worker process started as the
 * benchmarks start it, `--jobs` bulkEnrich jobs of `--domains` domains one after the other, and for each its peak RSS
 * above idle; then, at the highest RSS, how much of it was V8's heap, external memory (buffers) and the rest (native:
 * the binary, Temporal's core, allocator arenas), against the same at idle.
 *
 *   node bench/memory-probe.ts [--domains 10000] [--jobs 1] [--concurrency 8] [--env NAME=VALUE ...]
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BulkEnrichInput } from '../workflows/bulk-enrich.ts';
import { startBenchEnv } from './lib/env.ts';
import { writeDomainsCsv } from './lib/files.ts';
import { mib, num } from './lib/format.ts';
import { memoryOf, startWorkerProcess } from './lib/proc.ts';

const sampler = fileURLToPath(new URL('./lib/memory-sampler.ts', import.meta.url));
const { values } = parseArgs({
  options: {
    domains: { type: 'string', default: '10000' },
    jobs: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '8' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const domains = Number(values.domains);
const extra = Object.fromEntries(
  values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);

const bench = await startBenchEnv({ sandbox: { faults: { latencyMs: 50 } } });
const samples = join(bench.dir, 'memory-samples.json');
const worker = await startWorkerProcess(
  'memory-probe-worker',
  bench.env.childEnv({
    ...extra,
    SIGNAL_API_RATE_LIMIT: '6000000',
    SIGNAL_KIT_MEMORY_SAMPLES: samples,
    NODE_OPTIONS: `--import ${sampler} ${extra['NODE_OPTIONS'] ?? ''}`.trim(),
  }),
);
const config = bench.env.config();
const input = join(bench.dir, 'domains.csv');
await writeDomainsCsv(input, domains);
type Sample = Record<string, number>;
let record: { idle: Sample; peak: Sample; fullGcs: Sample[] };
const threads: string[] = [];
try {
  process.kill(worker.proc.pid, 'SIGUSR2');
  for (let j = 1; j <= Number(values.jobs); j++) {
    const jobId = `memory-probe-${j}-${Date.now()}`;
    const args: BulkEnrichInput = {
      jobId,
      input,
      output: pathToFileURL(join(bench.dir, 'out')).href,
      compression: 'none',
      concurrency: Number(values.concurrency),
      taskQueue: config.taskQueue,
      apiTaskQueue: config.apiTaskQueue,
    };
    worker.watch.mark();
    const started = performance.now();
    const handle = await bench.env.client.workflow.start('bulkEnrich', {
      workflowId: jobId,
      taskQueue: config.taskQueue,
      args: [args],
    });
    await handle.result();
    const ms = performance.now() - started;
    worker.watch.sample();
    const peakKb = memoryOf(worker.proc.pid)?.peakKb ?? worker.watch.peakKb;
    console.log(
      `job ${j}: ${num((domains / ms) * 1000, 0)} domains/s, worker CPU ${num(worker.watch.cpuSinceMark(), 1)} s, ` +
        `peak ${mib(peakKb)} (idle ${mib(worker.idleKb)}, peak − idle ${mib(peakKb - worker.idleKb)})`,
    );
    await rm(join(bench.dir, 'out', jobId), { recursive: true, force: true });
  }
  await new Promise((resolve) => setTimeout(resolve, 1_500)); // the sampler writes its record every second
  record = JSON.parse(await readFile(samples, 'utf8')) as typeof record;
  for (const name of await readdir(bench.dir)) {
    if (!name.startsWith('memory-samples.json.thread-')) continue;
    const thread = JSON.parse(await readFile(join(bench.dir, name), 'utf8')) as typeof record;
    threads.push(
      `${name.slice('memory-samples.json.'.length)}: V8 heap ${num(thread.idle['heapTotal']!, 0)} MiB at idle, ${num(Math.max(...thread.fullGcs.map((s) => s['heapTotal']!), thread.peak['heapTotal']!), 0)} at most (new_space ${num(thread.peak['new_space'] ?? 0, 0)} at the process's highest RSS)`,
    );
  }
} finally {
  await worker.stop();
  await bench.stop();
}
const parts = (s: Sample) => {
  const native = s['rss']! - s['heapTotal']! - s['external']!;
  const spaces = ['new_space', 'old_space', 'large_object_space']
    .map((space) => `${space} ${num(s[space] ?? 0, 0)}`)
    .join(', ');
  return `RSS ${num(s['rss']!, 0)} MiB = V8 heap ${num(s['heapTotal']!, 0)} (${spaces}) + external ${num(s['external']!, 0)} (array buffers ${num(s['arrayBuffers']!, 0)}) + other ${num(native, 0)}`;
};
console.log(`idle:        ${parts(record.idle)}`);
console.log(`highest RSS: ${parts(record.peak)}`);
for (const line of threads) console.log(line);
