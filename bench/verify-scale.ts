/**
 * verify-scale: a large address list (10% duplicates, some only in case or spacing) through verifyEmails with the
 * worker in its own process: addresses/s, the worker's peak RSS, the longest history of any run of the
 * continue-as-new chain, and whether the job's summary equals the sum over what the parts hold (recounted line by
 * line) and the credits the sandbox's ledger charged.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { createGunzip } from 'node:zlib';
import type { JobResult, Manifest, VerificationSummary } from '../activities/jobs/types.ts';
import { DEFAULT_BATCHES_PER_RUN } from '../workflows/constants.ts';
import type { VerifyEmailsInput } from '../workflows/verify-emails.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { num, peakOverIdle, secs } from './lib/format.ts';
import { chainHistory } from './lib/history.ts';
import { machine } from './lib/machine.ts';
import { ownCpuSeconds, startWorkerProcess } from './lib/proc.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  full: { addresses: 1_000_000, duplicateShare: 0.1, batchesPerRun: undefined },
  // Few chunks per run, so that the smoke run also continues as new and the chain is followed.
  smoke: { addresses: 10_000, duplicateShare: 0.1, batchesPerRun: 4 },
} as const;

/** `count` rows of which `duplicateShare` repeat an earlier address (a third exactly, the rest in other case or spacing). */
export async function writeAddressesCsv(path: string, count: number, duplicateShare: number): Promise<number> {
  const distinct = Math.round(count * (1 - duplicateShare));
  const first = ['ada', 'alan', 'grace', 'linus', 'ken', 'barbara', 'edsger', 'donald', 'margaret', 'dennis'];
  const rows: string[] = ['email'];
  const addressOf = (i: number) => `${first[i % first.length]}.n${i}@company-${i % 20_000}.com`;
  // Deterministic spread of the duplicates between the originals.
  let state = 12345;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  let written = 0;
  let duplicates = 0;
  for (let i = 0; i < distinct; i++) {
    rows.push(addressOf(i));
    written += 1;
    // Keep the duplicate share even along the file.
    while (
      duplicates < Math.round((written * duplicateShare) / (1 - duplicateShare)) &&
      duplicates < count - distinct
    ) {
      const original = addressOf(Math.floor(random() * (i + 1)));
      const kind = duplicates % 3;
      const [local, domain] = original.split('@') as [string, string];
      rows.push(kind === 0 ? original : kind === 1 ? `${local}@${domain.toUpperCase()}` : ` ${original} `);
      duplicates += 1;
    }
  }
  await writeFile(path, `${rows.join('\n')}\n`);
  return distinct;
}

/** Tallies every line of every part: results per kind and error records. */
async function recount(dir: string): Promise<{ lines: number; errors: number; summary: VerificationSummary }> {
  const summary: VerificationSummary = { total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 };
  let lines = 0;
  let errors = 0;
  for (const name of (await readdir(dir)).filter((n) => /^part-\d+\.jsonl\.gz$/.test(n)).sort()) {
    const input = createReadStream(join(dir, name)).pipe(createGunzip());
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line === '') continue;
      lines += 1;
      const record = JSON.parse(line) as { status: string; result?: keyof Omit<VerificationSummary, 'total'> };
      if (record.status !== 'ok' || !record.result) {
        errors += 1;
        continue;
      }
      summary.total += 1;
      summary[record.result] += 1;
    }
  }
  return { lines, errors, summary };
}

/** Runs the job once at `addresses` in a fresh worker and reports the worker's idle and peak RSS. */
async function memoryProbe(
  env: Awaited<ReturnType<typeof startBenchEnv>>['env'],
  dir: string,
  addresses: number,
  duplicateShare: number,
  log: (line: string) => void,
): Promise<{ addresses: number; idleKb: number; peakKb: number; completed: boolean }> {
  const worker = await startWorkerProcess('verify-probe', env.childEnv({ SIGNAL_API_RATE_LIMIT: '6000000' }));
  try {
    const input = join(dir, 'probe.csv');
    await writeAddressesCsv(input, addresses, duplicateShare);
    const config = env.config();
    const jobId = `verify-probe-${Date.now()}`;
    log(`memory probe: ${addresses} addresses, worker pid ${worker.proc.pid}`);
    const args: VerifyEmailsInput = {
      jobId,
      input,
      output: pathToFileURL(join(dir, 'probe-out')).href,
      taskQueue: config.taskQueue,
      apiTaskQueue: config.apiTaskQueue,
    };
    const result = (await env.client.workflow.execute('verifyEmails', {
      workflowId: jobId,
      taskQueue: config.taskQueue,
      args: [args],
    })) as JobResult;
    const { peakKb } = await worker.stop();
    return { addresses, idleKb: worker.idleKb, peakKb, completed: result.status === 'completed' };
  } finally {
    await worker.stop();
  }
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = logger('verify-scale', options.log);
  const { addresses, duplicateShare, batchesPerRun } = SIZES[size];
  const startedAt = new Date();
  const bench = await startBenchEnv({});
  const { env } = bench;
  // Memory must not follow the input: the same job at a tenth of the size first, in a fresh worker of its own.
  const probe = await memoryProbe(env, bench.dir, Math.round(addresses / 10), duplicateShare, log);
  const worker = await startWorkerProcess('verify-worker', env.childEnv({ SIGNAL_API_RATE_LIMIT: '6000000' }));
  try {
    const input = join(bench.dir, 'addresses.csv');
    const distinct = await writeAddressesCsv(input, addresses, duplicateShare);
    const config = env.config();
    const jobId = `verify-bench-${Date.now()}`;
    const outDir = join(bench.dir, 'out');
    const args: VerifyEmailsInput = {
      jobId,
      input,
      output: pathToFileURL(outDir).href,
      taskQueue: config.taskQueue,
      apiTaskQueue: config.apiTaskQueue,
      ...(batchesPerRun ? { batchesPerRun } : {}),
    };
    log(`${addresses} addresses (${distinct} distinct) through verifyEmails, worker pid ${worker.proc.pid}`);
    const ledgerBefore = env.sandbox.ledger.total();
    const driver = ownCpuSeconds();
    bench.temporal.mark();
    worker.watch.mark();
    const started = performance.now();
    const handle = await env.client.workflow.start('verifyEmails', {
      workflowId: jobId,
      taskQueue: config.taskQueue,
      args: [args],
    });
    const bound = setTimeout(() => void handle.terminate('benchmark time bound').catch(() => {}), 45 * 60_000);
    const result = (await handle.result().finally(() => clearTimeout(bound))) as JobResult;
    const wallMs = performance.now() - started;
    const workerCpuS = worker.watch.cpuSinceMark();
    const driverCpuS = ownCpuSeconds() - driver;
    const temporalCpuS = bench.temporal.cpuSinceMark();
    const charged = env.sandbox.ledger.total() - ledgerBefore;
    const { peakKb } = await worker.stop();

    const runs = await chainHistory(env.client, jobId, handle.firstExecutionRunId);
    const maxEvents = Math.max(...runs.map((r) => r.events));
    const manifest = JSON.parse(await readFile(join(outDir, jobId, '_manifest.json'), 'utf8')) as Manifest;
    const counted = await recount(join(outDir, jobId, 'parts'));
    const summary = manifest.summary!;
    const summaryEqualsSum =
      JSON.stringify(summary) === JSON.stringify(counted.summary) &&
      summary.total === summary.deliverable + summary.undeliverable + summary.risky + summary.unknown;
    const rate = (addresses / wallMs) * 1000;

    return {
      name: 'verify-scale',
      size,
      title: `verify-scale: ${addresses.toLocaleString('en-US')} addresses (${num(duplicateShare * 100, 0)} % duplicates, ${distinct.toLocaleString('en-US')} distinct) through verifyEmails, chunks of 1,000, worker in its own process, sandbox without rate limit or latency, file output (gzip parts).`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: {
        columns: ['measure', 'value'],
        rows: [
          ['addresses/s (input rows ÷ job wall time)', num(rate, 0)],
          ['job wall time', secs(wallMs)],
          ['worker peak RSS (idle: its RSS once it polled, before any job)', peakOverIdle(peakKb, worker.idleKb)],
          [
            `worker peak RSS at ${probe.addresses.toLocaleString('en-US')} addresses, fresh worker`,
            peakOverIdle(probe.peakKb, probe.idleKb),
          ],
          [
            'CPU s: worker / sandbox + driver / Temporal server',
            `${num(workerCpuS, 1)} / ${num(driverCpuS, 1)} / ${num(temporalCpuS, 1)}`,
          ],
          ['workflow runs (continue-as-new chain)', runs.length],
          ['history events, largest run', maxEvents],
          ['history events, all runs', runs.reduce((sum, r) => sum + r.events, 0)],
          [
            'distinct / duplicates / lines written',
            `${manifest.counts.distinct} / ${manifest.counts.duplicates} / ${counted.lines}`,
          ],
          [
            'summary (deliverable / undeliverable / risky / unknown)',
            `${summary.deliverable} / ${summary.undeliverable} / ${summary.risky} / ${summary.unknown}`,
          ],
          ['summary equals the sum of the parts, recounted', summaryEqualsSum ? 'yes' : 'NO'],
          ['credits: manifest / sandbox ledger', `${manifest.credits_charged} / ${charged}`],
        ],
      },
      metrics: {
        machine: machine(),
        addresses,
        distinct,
        wallMs,
        addressesPerS: rate,
        peakKb,
        idleKb: worker.idleKb,
        probe,
        workerCpuS,
        driverCpuS,
        temporalCpuS,
        runs,
        maxEvents,
        manifestCounts: manifest.counts,
        summary,
        recounted: counted,
        creditsManifest: manifest.credits_charged,
        creditsLedger: charged,
      },
      checks: {
        'job completed': result.status === 'completed',
        'duplicates removed':
          manifest.counts.distinct === distinct && manifest.counts.duplicates === addresses - distinct,
        'one line per distinct address': counted.lines === distinct,
        'summary equals the sum': summaryEqualsSum,
        'every line verified or an error record': counted.summary.total + counted.errors === counted.lines,
        'credits equal the ledger': manifest.credits_charged === charged,
        'history stays small (continue-as-new)': maxEvents < 10_000,
        'worker peak RSS within its idle RSS + 150 MiB, at both sizes':
          peakKb <= worker.idleKb + 150 * 1024 && probe.peakKb <= probe.idleKb + 150 * 1024,
        'worker peak RSS does not grow with the input (10× the addresses)': peakKb <= probe.peakKb * 1.25 + 32 * 1024,
        'memory probe completed': probe.completed,
      },
      notes: [
        `History events are counted per run of the chain after the job (fetchHistory of each run); the job continues as new every ${DEFAULT_BATCHES_PER_RUN} chunks by default, so no run grows with the input.`,
      ],
    };
  } finally {
    await worker.stop();
    await bench.stop();
  }
}

export const benchmark: Benchmark = {
  name: 'verify-scale',
  description: '1,000,000 addresses (10% duplicates) through verifyEmails: addresses/s, RSS, history length, summary',
  run,
};
