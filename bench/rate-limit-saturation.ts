/**
 * rate-limit-saturation: how close two worker processes together get to the account's budget (the sandbox enforcing
 * 300 requests per sliding minute) without going over it, with the kit's defaults (window concurrency, API queue
 * rate limit from SIGNAL_API_RATE_LIMIT). Every call is counted by a proxy in front of the sandbox, not by the kit.
 *
 * It runs twice: on a Temporal dev server as it comes (every task queue in 4 partitions) and on one whose task
 * queues have a single partition. Temporal divides a queue's rate limit among its partitions, and a partition
 * without a waiting task (or a poller) at the moment it may dispatch loses its share; one partition does not.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JobResult, Manifest } from '../activities/jobs/types.ts';
import type { BulkEnrichInput } from '../workflows/bulk-enrich.ts';
import { DEFAULT_BATCH_CONCURRENCY } from '../workflows/constants.ts';
import { maxInWindow, startCountingProxy } from './lib/counting-proxy.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { writeDomainsCsv } from './lib/files.ts';
import { mib, num, pct, secs } from './lib/format.ts';
import { activityTimings, chainEvents } from './lib/history.ts';
import { machine } from './lib/machine.ts';
import { startWorkerProcess } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import type { Benchmark, BenchResult, Size } from './lib/types.ts';

export const SIZES = {
  // 1,000 calls at 300/min: 200 s of calls at the ideal rate, per configuration.
  full: { domains: 100_000, rateLimit: 300, windowMs: 60_000, latencyMs: 50 },
  // 20 calls under a 10 s window of 50: seconds, and the window still turns over.
  smoke: { domains: 2_000, rateLimit: 50, windowMs: 10_000, latencyMs: 50 },
} as const;

/** The two Temporal configurations compared. */
export const CONFIGURATIONS = [
  { name: 'partitions-4', label: 'dev server as it comes (4 partitions per task queue)', args: [] as string[] },
  {
    name: 'partitions-1',
    label: 'task queues with 1 partition',
    args: [
      '--dynamic-config-value',
      'matching.numTaskqueueReadPartitions=1',
      '--dynamic-config-value',
      'matching.numTaskqueueWritePartitions=1',
    ],
  },
] as const;

export interface SaturationOptions {
  log?: (line: string) => void;
  /** Overrides for exploring (not used by `bench/run.ts`): the domains, the workflow's window concurrency. */
  domains?: number;
  concurrency?: number;
  /** Only these configurations (names of CONFIGURATIONS). */
  configurations?: string[];
}

interface Outcome {
  name: string;
  label: string;
  status: string;
  lines: number;
  accepted: number;
  rateLimited: number;
  otherFailures: number;
  wallMs: number;
  spanMs: number;
  achievedPerMin: number;
  share: number;
  busiestWindow: number;
  queuedMs: number;
  runningMs: number;
  workerPeakKb: number[];
}

async function runOnce(
  size: Size,
  configuration: (typeof CONFIGURATIONS)[number],
  options: SaturationOptions,
  log: (line: string) => void,
): Promise<Outcome> {
  const { rateLimit, windowMs, latencyMs } = SIZES[size];
  const domains = options.domains ?? SIZES[size].domains;
  const bench = await startBenchEnv({
    sandbox: { rateLimitPerMinute: rateLimit, rateLimitWindowMs: windowMs, faults: { latencyMs } },
    temporalArgs: [...configuration.args],
  });
  const { env } = bench;
  const proxy = await startCountingProxy(env.sandbox.url);
  // The worker's budget per minute, scaled like the sandbox's window: `rateLimit` per `windowMs`.
  const perMinute = Math.round((rateLimit * 60_000) / windowMs);
  const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url, SIGNAL_API_RATE_LIMIT: String(perMinute) });
  const workers = [
    await startWorkerProcess('saturation-worker-1', workerEnv),
    await startWorkerProcess('saturation-worker-2', workerEnv),
  ];
  try {
    const input = join(bench.dir, 'domains.csv');
    await writeDomainsCsv(input, domains);
    const config = env.config();
    const jobId = `saturation-${Date.now()}`;
    const batches = Math.ceil(domains / 100);
    const idealMs = (batches / perMinute) * 60_000;
    log(`${configuration.label}: ${batches} calls at ${rateLimit} per ${windowMs / 1000} s, ideal ${secs(idealMs)}`);
    const args: BulkEnrichInput = {
      jobId,
      input,
      output: pathToFileURL(join(bench.dir, 'out')).href,
      taskQueue: config.taskQueue,
      apiTaskQueue: config.apiTaskQueue,
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    };
    const started = Date.now();
    const handle = await env.client.workflow.start('bulkEnrich', {
      workflowId: jobId,
      taskQueue: config.taskQueue,
      args: [args],
    });
    const bound = setTimeout(
      () => void handle.terminate('benchmark time bound').catch(() => {}),
      3 * idealMs + 120_000,
    );
    const result = (await handle.result().finally(() => clearTimeout(bound))) as JobResult;
    const wallMs = Date.now() - started;
    const manifest = JSON.parse(await readFile(join(bench.dir, 'out', jobId, '_manifest.json'), 'utf8')) as Manifest;

    const enrich = proxy.calls.filter((call) => call.path === '/v1/companies/enrich/bulk');
    const accepted = enrich.filter((call) => call.status === 200);
    const limited = enrich.filter((call) => call.status === 429).length;
    const times = accepted.map((call) => call.at);
    const spanMs = Math.max(...times) - Math.min(...times);
    const achievedPerMin = (accepted.length / wallMs) * 60_000;
    // Where a batch's time goes, from the workflow's own history: waiting in the rate-limited queue, running.
    const timings = (await chainEvents(env.client, jobId, handle.firstExecutionRunId)).flatMap((r) =>
      activityTimings(r.events, 'enrichBatch'),
    );
    return {
      name: configuration.name,
      label: configuration.label,
      status: result.status,
      lines: manifest.counts.lines,
      accepted: accepted.length,
      rateLimited: limited,
      otherFailures: enrich.length - accepted.length - limited,
      wallMs,
      spanMs,
      achievedPerMin,
      share: achievedPerMin / perMinute,
      busiestWindow: maxInWindow(times, windowMs),
      queuedMs: median(timings.map((t) => t.startedMs - t.scheduledMs)),
      runningMs: median(timings.map((t) => t.closedMs - t.startedMs)),
      workerPeakKb: workers.map((worker) => {
        worker.watch.sample();
        return worker.watch.peakKb;
      }),
    };
  } finally {
    for (const worker of workers) await worker.stop();
    await proxy.close();
    await bench.stop();
  }
}

export async function run(size: Size, options: SaturationOptions = {}): Promise<BenchResult> {
  const log = logger('rate-limit-saturation', options.log);
  const { rateLimit, windowMs, latencyMs } = SIZES[size];
  const domains = options.domains ?? SIZES[size].domains;
  const batches = Math.ceil(domains / 100);
  const perMinute = Math.round((rateLimit * 60_000) / windowMs);
  const idealMs = (batches / perMinute) * 60_000;
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const startedAt = new Date();
  const outcomes: Outcome[] = [];
  for (const configuration of CONFIGURATIONS) {
    if (options.configurations && !options.configurations.includes(configuration.name)) continue;
    outcomes.push(await runOnce(size, configuration, options, log));
  }

  const row = (label: string, value: (o: Outcome) => string | number) => [label, ...outcomes.map(value)];
  const checks: Record<string, boolean> = {};
  for (const o of outcomes) {
    checks[`${o.name}: job completed with one line per domain`] = o.status === 'completed' && o.lines === domains;
    checks[`${o.name}: one accepted call per batch`] = o.accepted === batches;
    checks[`${o.name}: never over the limit in any window`] = o.busiestWindow <= rateLimit;
  }
  return {
    name: 'rate-limit-saturation',
    size,
    title: `rate-limit-saturation: ${domains.toLocaleString('en-US')} domains (${batches} bulk calls) through two worker processes; sandbox enforcing ${rateLimit} requests per ${windowMs / 1000} s (sliding), latency ${latencyMs} ms/call; kit defaults (window concurrency ${concurrency}, API queue limited to SIGNAL_API_RATE_LIMIT=${perMinute}/min).`,
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    table: {
      columns: ['measure', ...outcomes.map((o) => o.label)],
      rows: [
        row('share of the limit (calls ÷ job wall time)', (o) => pct(o.share)),
        row('achieved rate over the job', (o) => `${num(o.achievedPerMin, 1)}/min`),
        row('achieved rate, first to last call', (o) => `${num(((o.accepted - 1) / o.spanMs) * 60_000, 1)}/min`),
        row('calls accepted (200)', (o) => o.accepted),
        row('429 answers', (o) => o.rateLimited),
        row('other failed answers', (o) => o.otherFailures),
        row('job wall time (start → manifest)', (o) => secs(o.wallMs)),
        row(`ideal (${batches} calls ÷ ${perMinute}/min)`, () => secs(idealMs)),
        row('wall / ideal', (o) => `${num(o.wallMs / idealMs, 3)}×`),
        row(`most calls in any ${windowMs / 1000} s window (limit ${rateLimit})`, (o) => o.busiestWindow),
        row(
          'median per call: queued (rate limit) / running',
          (o) => `${num(o.queuedMs, 0)} ms / ${num(o.runningMs, 0)} ms`,
        ),
        row('peak RSS of the workers', (o) => o.workerPeakKb.map((kb) => mib(kb)).join(', ')),
      ],
    },
    metrics: { machine: machine(), domains, batches, rateLimit, windowMs, perMinute, idealMs, concurrency, outcomes },
    checks,
    notes: [
      'Calls are counted by a proxy between the workers and the sandbox (time = when the call reached the service), not by the kit.',
      "Temporal divides a task queue's rate limit among its partitions (4 by default); a partition that has no task or no poller waiting when it may dispatch loses its share, so a queue limited to 300/min dispatches less. With one partition the limit is one token bucket. The API queue of a deployment can be given one partition in the server's dynamic config (matching.numTaskqueueReadPartitions and ...WritePartitions, constrained to the API queue's name): at 5 calls/s it needs no more.",
    ],
  };
}

export const benchmark: Benchmark = {
  name: 'rate-limit-saturation',
  description: 'two worker processes against a 300 rpm sandbox: share of the limit, 429s, wall vs ideal',
  run,
};
