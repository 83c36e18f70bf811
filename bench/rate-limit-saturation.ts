/**
 * rate-limit-saturation: how close the kit gets to the account's budget (the sandbox enforcing 300 requests per
 * sliding minute) without going over it, with its defaults (window concurrency, SIGNAL_API_RATE_LIMIT), through two
 * worker processes. Every call is counted by a proxy in front of the sandbox, not by the kit.
 *
 * Five cases: one job on a Temporal dev server as it comes (every task queue in 4 partitions); two jobs at once
 * sharing the account on the same server; one job on a server whose task queues have a single partition; and single
 * calls (an `enrich-contacts` job: one `POST /v1/contacts/enrich` per contact) alone and beside a bulk job sharing
 * the account, with the same number of calls in all: single-call jobs must use the same share of the limit. The kit
 * paces calls with its own limiter (workflows/rate-limiter.ts), so the partitions should not matter: Temporal's
 * task queue rate limit, which it replaced, is divided among partitions and a partition without a waiting task
 * loses its share.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JobResult, Manifest } from '../activities/jobs/types.ts';
import { maxInWindow, startApiProxy } from '../testkit/api-proxy.ts';
import type { BulkEnrichInput } from '../workflows/bulk-enrich.ts';
import { DEFAULT_BATCH_CONCURRENCY } from '../workflows/constants.ts';
import { ARRIVAL_GUARD_MS, slotIntervalMs } from '../workflows/rate-limiter-schedule.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { writeContactsCsv, writeDomainsCsv } from './lib/files.ts';
import { num, pct, peakOverIdle, secs } from './lib/format.ts';
import { activityTimings, chainEvents } from './lib/history.ts';
import { machine } from './lib/machine.ts';
import { startWorkerProcess } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  // 1,000 calls at 300/min: 200 s of calls at the ideal rate, per configuration.
  full: { domains: 100_000, rateLimit: 300, windowMs: 60_000, latencyMs: 50 },
  // 20 calls under a 10 s window of 50: seconds, and the window still turns over.
  smoke: { domains: 2_000, rateLimit: 50, windowMs: 10_000, latencyMs: 50 },
} as const;

const ONE_PARTITION = [
  '--dynamic-config-value',
  'matching.numTaskqueueReadPartitions=1',
  '--dynamic-config-value',
  'matching.numTaskqueueWritePartitions=1',
];

/** One case: the dev server started with `args`, `jobs` bulk jobs at once, and a contacts job beside them or not. */
const configuration = <N extends string>(
  name: N,
  label: string,
  jobs: number,
  contacts: boolean,
  args: string[] = [],
) => ({ name, label, args, jobs, contacts }) as const;

/**
 * The cases compared: Temporal server configuration, bulk jobs and single-call (contacts) jobs at once. Every case
 * makes the same number of calls: the bulk jobs split the domains among them, and a contacts job takes the calls of
 * the bulk jobs it replaces (alone: all of them; beside one bulk job: half).
 */
export const CONFIGURATIONS = [
  configuration('partitions-4', 'dev server as it comes (4 partitions), one job', 1, false),
  configuration('two-jobs', 'dev server as it comes, two jobs at once', 2, false),
  configuration('single-calls', 'single calls (enrich-contacts), one job', 0, true),
  configuration('single-and-bulk', 'single calls beside a bulk job on the same account', 1, true),
  configuration('partitions-1', 'task queues with 1 partition, one job', 1, false, ONE_PARTITION),
] as const;

const PATH_BULK = '/v1/companies/enrich/bulk';
const PATH_CONTACT = '/v1/contacts/enrich';

export interface SaturationOptions extends RunOptions {
  /** Overrides for exploring (not used by `bench/run.ts`): the domains, the workflow's window concurrency, signals per domain. */
  domains?: number;
  concurrency?: number;
  signalsPerDomain?: number;
  /** Only these configurations (names of CONFIGURATIONS). */
  configurations?: string[];
}

interface Outcome {
  name: string;
  label: string;
  jobs: number;
  status: string;
  lines: number;
  /** Input rows of its jobs (domains and contacts): one line each. */
  rows: number;
  /** Accepted calls that were single (`POST /v1/contacts/enrich`). */
  singleCalls: number;
  /** Each job's wall time from the common start. */
  jobWallMs: number[];
  accepted: number;
  rateLimited: number;
  otherFailures: number;
  wallMs: number;
  spanMs: number;
  /** Job start → first accepted call, and last accepted call → last manifest. */
  startupMs: number;
  tailMs: number;
  /** Job start → the whole input prepared (its last preparation activity done), and → the first batch picked up. */
  preparedMs: number;
  firstBatchMs: number;
  /** Last accepted call → the last batch done, and → the last manifest written (from the jobs' histories). */
  lastBatchDoneMs: number;
  manifestWrittenMs: number;
  busiestWindow: number;
  /** The same, with each call at the time the sandbox counted it (behind the proxy: its own arrival jitter added). */
  busiestWindowAtService: number;
  /** Proxy → sandbox: how much later the sandbox counted a call than the proxy saw it (median, max). */
  proxyToServiceMs: { median: number; max: number };
  achievedPerMin: number;
  share: number;
  queuedMs: number;
  runningMs: number;
  /** Each worker's RSS once it polled, before any job. */
  workerIdleKb: number[];
  workerPeakKb: number[];
}

type Configuration = (typeof CONFIGURATIONS)[number];

/** Runs the cases that share a Temporal configuration one after the other on one stack and one pair of workers. */
async function runOnStack(
  size: Size,
  configurations: Configuration[],
  options: SaturationOptions,
  log: (line: string) => void,
): Promise<Outcome[]> {
  const { rateLimit, windowMs, latencyMs } = SIZES[size];
  const bench = await startBenchEnv({
    sandbox: { rateLimitPerMinute: rateLimit, rateLimitWindowMs: windowMs, faults: { latencyMs } },
    temporalArgs: [...(configurations[0]?.args ?? [])],
  });
  const { env } = bench;
  const proxy = await startApiProxy(env.sandbox.url);
  // The worker's budget per minute, scaled like the sandbox's window: `rateLimit` per `windowMs`.
  const perMinute = Math.round((rateLimit * 60_000) / windowMs);
  const workerEnv = env.childEnv({ SIGNAL_API_URL: proxy.url, SIGNAL_API_RATE_LIMIT: String(perMinute) });
  const workers = [
    await startWorkerProcess('saturation-worker-1', workerEnv),
    await startWorkerProcess('saturation-worker-2', workerEnv),
  ];
  try {
    const outcomes: Outcome[] = [];
    for (const configuration of configurations) {
      outcomes.push(await runCase(size, configuration, options, log, { bench, proxy, workers, perMinute }));
    }
    return outcomes;
  } finally {
    for (const worker of workers) await worker.stop();
    await proxy.stop();
    await bench.stop();
  }
}

interface Stack {
  bench: Awaited<ReturnType<typeof startBenchEnv>>;
  proxy: Awaited<ReturnType<typeof startApiProxy>>;
  workers: Awaited<ReturnType<typeof startWorkerProcess>>[];
  perMinute: number;
}

async function runCase(
  size: Size,
  configuration: Configuration,
  options: SaturationOptions,
  log: (line: string) => void,
  { bench, proxy, workers, perMinute }: Stack,
): Promise<Outcome> {
  const { rateLimit, windowMs } = SIZES[size];
  const domains = options.domains ?? SIZES[size].domains;
  const { env } = bench;
  const config = env.config();
  const batches = Math.ceil(domains / 100);
  const idealMs = (batches / perMinute) * 60_000;
  const jobs = configuration.jobs + (configuration.contacts ? 1 : 0);
  log(
    `${configuration.label}: ${batches} calls in ${jobs} job(s) at ${rateLimit} per ${windowMs / 1000} s, ideal ${secs(idealMs)}`,
  );
  // The calls split among the jobs, each its own input file; all started at once. A contacts job makes one call per
  // contact, so it gets as many contacts as the calls of the bulk job it stands in for.
  const bulkCalls = configuration.contacts ? Math.floor(batches / jobs) * configuration.jobs : batches;
  const contacts = batches - bulkCalls;
  const inputs: { input: string; jobId: string; workflow: 'bulkEnrich' | 'enrichContacts'; rows: number }[] = [];
  for (let j = 0; j < configuration.jobs; j++) {
    const input = join(bench.dir, `${configuration.name}-${j}.csv`);
    const rows = Math.ceil((bulkCalls * 100) / configuration.jobs);
    await writeDomainsCsv(input, rows);
    inputs.push({ input, jobId: `saturation-${Date.now()}-${j}`, workflow: 'bulkEnrich', rows });
  }
  if (contacts > 0) {
    const input = join(bench.dir, `${configuration.name}-contacts.csv`);
    await writeContactsCsv(input, contacts);
    inputs.push({ input, jobId: `saturation-${Date.now()}-contacts`, workflow: 'enrichContacts', rows: contacts });
  }
  const firstCall = proxy.calls.length;
  const firstServiceCall = bench.env.sandbox.truth.lastCall();
  const started = Date.now();
  const runs = await Promise.all(
    inputs.map(async ({ input, jobId, workflow, rows }) => {
      const args: BulkEnrichInput = {
        jobId,
        input,
        output: pathToFileURL(join(bench.dir, 'out')).href,
        taskQueue: config.taskQueue,
        apiTaskQueue: config.apiTaskQueue,
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.signalsPerDomain ? { options: { limit: options.signalsPerDomain } } : {}),
      };
      const handle = await env.client.workflow.start(workflow, {
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
      const manifestPath = join(bench.dir, 'out', jobId, '_manifest.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
      return { jobId, runId: handle.firstExecutionRunId, result, wallMs, lines: manifest.counts.lines, rows, workflow };
    }),
  );
  const wallMs = Math.max(...runs.map((r) => r.wallMs));

  const enrich = proxy.calls.slice(firstCall).filter((call) => call.path === PATH_BULK || call.path === PATH_CONTACT);
  // A contact the service does not know is answered 404: an answered call, counted by the limit like any other.
  const accepted = enrich.filter((call) => call.status === 200 || (call.path === PATH_CONTACT && call.status === 404));
  const limited = enrich.filter((call) => call.status === 429).length;
  const times = accepted.map((call) => call.startedAt);
  const spanMs = Math.max(...times) - Math.min(...times);
  const startupMs = Math.min(...times) - started;
  const achievedPerMin = (accepted.length / wallMs) * 60_000;
  // Where a batch's time goes, from the workflows' own history: waiting for dispatch and a slot, running.
  const timings = [];
  const prepared: number[] = [];
  const finalized: number[] = [];
  for (const run of runs) {
    for (const r of await chainEvents(env.client, run.jobId, run.runId)) {
      timings.push(...activityTimings(r.events, 'enrichBatch'), ...activityTimings(r.events, 'enrichContactsBatch'));
      finalized.push(...activityTimings(r.events, 'finalizeJob').map((t) => t.closedMs));
      for (const type of ['prepareInputStart', 'prepareInput']) {
        prepared.push(...activityTimings(r.events, type).map((t) => t.closedMs));
      }
    }
  }
  // The sandbox's own record: when it counted each accepted call (performance.now of this process).
  const counted = bench.env.sandbox.truth
    .calls({ after: firstServiceCall })
    .filter((call) => call.path === PATH_BULK || call.path === PATH_CONTACT)
    .filter((call) => call.rateCounted && (call.status === 200 || call.status === 404));
  const countedAt = new Map(counted.map((call) => [call.requestId, performance.timeOrigin + call.realMs]));
  const behind = accepted.flatMap((call) => {
    const at = call.requestId ? countedAt.get(call.requestId) : undefined;
    return at === undefined ? [] : [at - call.startedAt];
  });
  return {
    name: configuration.name,
    label: configuration.label,
    jobs,
    status: runs.every((r) => r.result.status === 'completed')
      ? 'completed'
      : runs.map((r) => r.result.status).join(','),
    lines: runs.reduce((sum, r) => sum + r.lines, 0),
    rows: runs.reduce((sum, r) => sum + r.rows, 0),
    singleCalls: accepted.filter((call) => call.path === PATH_CONTACT).length,
    jobWallMs: runs.map((r) => r.wallMs),
    accepted: accepted.length,
    rateLimited: limited,
    otherFailures: enrich.length - accepted.length - limited,
    wallMs,
    spanMs,
    startupMs,
    tailMs: wallMs - startupMs - spanMs,
    achievedPerMin,
    share: achievedPerMin / perMinute,
    busiestWindow: maxInWindow(times, windowMs),
    busiestWindowAtService: maxInWindow([...countedAt.values()], windowMs),
    proxyToServiceMs: { median: median(behind), max: Math.max(...behind) },
    preparedMs: Math.max(...prepared) - started,
    firstBatchMs: Math.min(...timings.map((t) => t.startedMs)) - started,
    lastBatchDoneMs: Math.max(...timings.map((t) => t.closedMs)) - Math.max(...times),
    manifestWrittenMs: Math.max(...finalized) - Math.max(...times),
    queuedMs: median(timings.map((t) => t.startedMs - t.scheduledMs)),
    runningMs: median(timings.map((t) => t.closedMs - t.startedMs)),
    workerIdleKb: workers.map((worker) => worker.idleKb),
    workerPeakKb: workers.map((worker) => {
      worker.watch.sample();
      return worker.watch.peakKb;
    }),
  };
}

export async function run(size: Size, options: SaturationOptions = {}): Promise<BenchResult> {
  const log = logger('rate-limit-saturation', options.log);
  const { rateLimit, windowMs, latencyMs } = SIZES[size];
  const domains = options.domains ?? SIZES[size].domains;
  const batches = Math.ceil(domains / 100);
  const perMinute = Math.round((rateLimit * 60_000) / windowMs);
  const idealMs = (batches / perMinute) * 60_000;
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const interval = slotIntervalMs(perMinute, windowMs);
  const startedAt = new Date();
  const outcomes: Outcome[] = [];
  const chosen = CONFIGURATIONS.filter((c) => !options.configurations || options.configurations.includes(c.name));
  // Cases on the same Temporal configuration share one stack (starting one costs seconds of the two cores).
  const groups = new Map<string, Configuration[]>();
  for (const configuration of chosen) {
    const key = configuration.args.join(' ');
    groups.set(key, [...(groups.get(key) ?? []), configuration]);
  }
  for (const group of groups.values()) outcomes.push(...(await runOnStack(size, group, options, log)));

  const row = (label: string, value: (o: Outcome) => string | number) => [label, ...outcomes.map(value)];
  const checks: Record<string, boolean> = {};
  for (const o of outcomes) {
    checks[`${o.name}: job completed with one line per domain or contact`] =
      o.status === 'completed' && o.lines === o.rows;
    checks[`${o.name}: one accepted call per batch`] = o.accepted === batches;
    checks[`${o.name}: never over the limit in any window`] =
      o.busiestWindow <= rateLimit && o.busiestWindowAtService <= rateLimit && o.rateLimited === 0;
  }
  return {
    name: 'rate-limit-saturation',
    size,
    title: `rate-limit-saturation: ${batches} calls per case (${domains.toLocaleString('en-US')} domains in bulk calls of 100, or one contact per single call) through two worker processes; sandbox enforcing ${rateLimit} requests per ${windowMs / 1000} s (sliding), latency ${latencyMs} ms/call; kit defaults (window concurrency ${concurrency}, SIGNAL_API_RATE_LIMIT=${perMinute}/min); two jobs split the domains.`,
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    table: {
      columns: ['measure', ...outcomes.map((o) => o.label)],
      rows: [
        row('share of the limit (calls ÷ job wall time)', (o) => pct(o.share)),
        row('achieved rate over the job', (o) => `${num(o.achievedPerMin, 1)}/min`),
        row('achieved rate, first to last call', (o) => `${num(((o.accepted - 1) / o.spanMs) * 60_000, 1)}/min`),
        row('calls accepted (200; 404 for an unknown contact)', (o) => o.accepted),
        row('… of them single calls (enrich-contacts)', (o) => o.singleCalls),
        row('429 answers', (o) => o.rateLimited),
        row('other failed answers', (o) => o.otherFailures),
        row('job wall time (start → last manifest)', (o) => secs(o.wallMs)),
        row('… start → first call', (o) => secs(o.startupMs)),
        row('… … from start: first batch picked up by a worker / whole input prepared', (o) =>
          [secs(o.firstBatchMs), secs(o.preparedMs)].join(' / '),
        ),
        row(`… first → last call, beyond the limiter's spacing (${num(interval, 1)} ms)`, (o) =>
          secs(o.spanMs - (o.accepted - 1) * interval),
        ),
        row('… last call → last manifest', (o) => secs(o.tailMs)),
        row('… … from the last call: last batch done / last manifest written', (o) =>
          [secs(o.lastBatchDoneMs), secs(o.manifestWrittenMs)].join(' / '),
        ),
        row('each job (start → its manifest)', (o) => o.jobWallMs.map((ms) => secs(ms)).join(', ')),
        row(`ideal (${batches} calls ÷ ${perMinute}/min)`, () => secs(idealMs)),
        row('wall / ideal', (o) => `${num(o.wallMs / idealMs, 3)}×`),
        row(
          `most calls in any ${windowMs / 1000} s window (limit ${rateLimit}): at the proxy / as the sandbox counted`,
          (o) => [o.busiestWindow, o.busiestWindowAtService].join(' / '),
        ),
        row(
          'proxy → sandbox counting the call: median / max',
          (o) => `${num(o.proxyToServiceMs.median, 0)} ms / ${num(o.proxyToServiceMs.max, 0)} ms`,
        ),
        row(
          'median per call: queued in Temporal / running (incl. waiting for its slot)',
          (o) => `${num(o.queuedMs, 0)} ms / ${num(o.runningMs, 0)} ms`,
        ),
        row('peak RSS of the workers (since their stack started)', (o) =>
          o.workerPeakKb.map((kb, i) => peakOverIdle(kb, o.workerIdleKb[i] ?? 0)).join(', '),
        ),
      ],
    },
    metrics: { machine: machine(), domains, batches, rateLimit, windowMs, perMinute, idealMs, concurrency, outcomes },
    checks,
    notes: [
      'Calls are counted by a proxy between the workers and the sandbox (time = when the call reached the service), not by the kit.',
      `The kit paces API calls with its own limiter, a workflow per API queue that grants evenly spaced slots ((60 s + ${ARRIVAL_GUARD_MS / 1000} s guard) ÷ budget apart) to every worker process and job; Temporal's task queue rate limit, used before, is divided among the queue's partitions (4 by default) and a partition without a waiting task loses its share (87 % of the budget on this benchmark).`,
    ],
  };
}

export const benchmark: Benchmark = {
  name: 'rate-limit-saturation',
  description:
    'two worker processes, one or two jobs, against a 300 rpm sandbox: share of the limit, 429s, wall vs ideal',
  run,
};
