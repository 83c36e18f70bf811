/**
 * Preloaded into a worker by `bench/memory-probe.ts` (`--import`): samples the process's memory every 20 ms and
 * writes, to the file named by SIGNAL_KIT_MEMORY_SAMPLES, the sample with the highest RSS, the idle sample and the
 * state after each full collection. SIGUSR2 marks idle and restarts the record (the probe sends it before a job).
 */
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

const MiB = 1024 * 1024;
type Sample = Record<string, number>;

function sample(): Sample {
  const m = process.memoryUsage();
  const s: Sample = { t: Math.round(performance.now()), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed };
  s['external'] = m.external;
  s['arrayBuffers'] = m.arrayBuffers;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_size > 0) s[space.space_name] = space.space_size;
  }
  return s;
}

const file = process.env['SIGNAL_KIT_MEMORY_SAMPLES'];
// Worker threads load the preload too (the workflow thread): each isolate writes its own record.
const out = file && (isMainThread ? file : `${file}.thread-${threadId}`);
if (out) {
  let idle = sample();
  let peak = idle;
  let fullGcs: Sample[] = [];
  const take = () => {
    const now = sample();
    if (now['rss']! >= peak['rss']!) peak = now;
  };
  new PerformanceObserver((list) => {
    // Kinds other than 1 (scavenge) end a full collection (mark-compact, incremental, weak callbacks).
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind !== 1) fullGcs.push(sample());
    }
  }).observe({ entryTypes: ['gc'] });
  const mib = (s: Sample) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === 't' ? v : v / MiB]));
  const flush = () => {
    const record = { idle: mib(idle), peak: mib(peak), fullGcs: fullGcs.map(mib) };
    writeFileSync(out, JSON.stringify(record));
  };
  setInterval(take, 20).unref();
  setInterval(flush, 1000).unref();
  process.on('exit', flush);
  process.on('SIGUSR2', () => {
    idle = sample();
    peak = idle;
    fullGcs = [];
  });
}
