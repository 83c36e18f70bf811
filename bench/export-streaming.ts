/**
 * export-streaming: an intent export's JSONL download streamed into S3 (versitygw) by signal-kit's intentExport
 * (worker in its own process: line checks, sha256, multipart upload, manifest) against the baseline of piping the
 * same download into `Upload` and nothing else. Each size gets a fresh worker process, so its peak RSS belongs to
 * that size alone: it must not grow with the file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import type { JobResult } from '../activities/jobs/types.ts';
import { SignalClient } from '../connectors/signal-api/client.ts';
import { s3ClientFor } from '../devstack/index.ts';
import { startSandbox } from '../sandbox/index.ts';
import type { IntentExportInput } from '../workflows/intent-export.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { mib, num, peakOverIdle, secs } from './lib/format.ts';
import { activitySpan } from './lib/history.ts';
import { machine } from './lib/machine.ts';
import { runNodeScript, startWorkerProcess } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

const baselineScript = fileURLToPath(new URL('./baselines/export-upload.ts', import.meta.url));

/** The sandbox pads every export line to 768 bytes (newline included). */
const LINE_BYTES = 768;
const MiB = 1024 * 1024;

export const SIZES = {
  full: { sizes: [256 * MiB, 1024 * MiB], rounds: 2, gzip: true },
  smoke: { sizes: [1 * MiB, 4 * MiB], rounds: 1, gzip: true },
} as const;

const BUCKET = 'bench-export';

interface Run {
  bytes: number;
  ms: number;
  mbPerS: number;
  cpuS: number;
  peakKb: number;
}

const label = (bytes: number) =>
  bytes >= 1024 * MiB ? `${num(bytes / 1024 / MiB, 1)} GiB` : `${num(bytes / MiB, bytes < 10 * MiB ? 1 : 0)} MiB`;

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = logger('export-streaming', options.log);
  const { sizes, rounds, gzip } = SIZES[size];
  const startedAt = new Date();
  const bench = await startBenchEnv({ s3: true });
  const { env } = bench;
  const s3 = s3ClientFor(env.stack.s3!);
  await env.createBuckets(BUCKET);
  const config = env.config();
  const checks: Record<string, boolean> = {};
  const perSize: {
    target: number;
    bytes: number;
    kit: Run[];
    baseline: Run[];
    kitPeakKb: number;
    /** The worker's RSS high-water mark once it polled, before any job. */
    kitIdleKb: number;
    gzip?: Run & { storedBytes: number };
  }[] = [];

  const objectSize = async (key: string) =>
    (await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).ContentLength ?? -1;
  const remove = (key: string) => s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));

  try {
    for (const [sizeIndex, target] of sizes.entries()) {
      const rows = Math.ceil(target / LINE_BYTES);
      const bytes = rows * LINE_BYTES;
      const sandbox = await startSandbox({
        rateLimitPerMinute: 0,
        credits: 1e15,
        exportRows: rows,
        exportTiming: { queuedMs: 0, runningMs: 0 },
      });
      const client = new SignalClient({ baseUrl: sandbox.url, apiKey: 'sk_test_1' });
      const worker = await startWorkerProcess(
        `export-worker-${label(target)}`,
        env.childEnv({ SIGNAL_API_URL: sandbox.url }),
      );
      const entry: (typeof perSize)[number] = {
        target,
        bytes,
        kit: [],
        baseline: [],
        kitPeakKb: 0,
        kitIdleKb: worker.idleKb,
      };
      perSize.push(entry);
      try {
        const kitRun = async (round: number | string, compression: 'none' | 'gzip') => {
          const jobId = `export-${sizeIndex}-${round}-${compression}-${Date.now()}`;
          const input: IntentExportInput = {
            jobId,
            output: `s3://${BUCKET}/kit`,
            request: { topic_ids: ['b2b_1'] },
            compression,
            taskQueue: config.taskQueue,
            apiTaskQueue: config.apiTaskQueue,
            poll: { initialMs: 100, factor: 1.5, maxMs: 1000 },
          };
          log(`${label(target)} round ${round}: A signal-kit intentExport (${compression})`);
          worker.watch.mark();
          const handle = await env.client.workflow.start('intentExport', {
            workflowId: jobId,
            taskQueue: config.taskQueue,
            args: [input],
          });
          const result = (await handle.result()) as JobResult;
          const cpuS = worker.watch.cpuSinceMark();
          worker.watch.sample();
          const span = activitySpan((await handle.fetchHistory()).events ?? [], 'downloadIntentExport');
          const key = `kit/${jobId}/parts/part-00000.jsonl${compression === 'gzip' ? '.gz' : ''}`;
          const stored = await objectSize(key);
          checks[`${label(target)} ${compression} round ${round}: kit stored every line`] =
            result.status === 'completed' &&
            result.counts.lines === rows &&
            (compression === 'gzip' || stored === bytes);
          await remove(key);
          const ms = span.endMs - span.startMs;
          return { bytes, ms, mbPerS: bytes / 1e6 / (ms / 1000), cpuS, peakKb: worker.watch.peakKb, stored };
        };
        const baselineRun = async (round: number) => {
          log(`${label(target)} round ${round}: B Upload alone`);
          let job = await client.createIntentExport({ topic_ids: ['b2b_1'] });
          for (let polls = 0; job.status !== 'ready' && polls < 200; polls++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            job = await client.getIntentExport(job.export_id);
          }
          if (!job.download_url) throw new Error(`export ${job.export_id} is ${job.status}`);
          const key = `baseline/${sizeIndex}-${round}.jsonl`;
          const report = join(bench.dir, `export-baseline-${sizeIndex}-${round}.json`);
          const script = await runNodeScript(
            'export-baseline',
            [baselineScript, '--url', job.download_url, '--bucket', BUCKET, '--key', key, '--report', report],
            env.childEnv(),
            30 * 60_000,
          );
          if (script.code !== 0) throw new Error(`the baseline failed (exit ${script.code}):\n${script.output}`);
          const stats = JSON.parse(await readFile(report, 'utf8')) as {
            elapsedMs: number;
            maxRssKb: number;
            cpuS: number;
          };
          checks[`${label(target)} round ${round}: baseline stored every byte`] = (await objectSize(key)) === bytes;
          await remove(key);
          return {
            bytes,
            ms: stats.elapsedMs,
            mbPerS: bytes / 1e6 / (stats.elapsedMs / 1000),
            cpuS: stats.cpuS,
            peakKb: Math.max(stats.maxRssKb, script.peakKb),
          };
        };

        for (let round = 1; round <= rounds; round++) {
          if ((round + sizeIndex) % 2 === 1) {
            entry.baseline.push(await baselineRun(round));
            entry.kit.push(await kitRun(round, 'none'));
          } else {
            entry.kit.push(await kitRun(round, 'none'));
            entry.baseline.push(await baselineRun(round));
          }
        }
        entry.kitPeakKb = worker.watch.peakKb;
        if (gzip && sizeIndex === sizes.length - 1) {
          const zipped = await kitRun('gzip', 'gzip');
          entry.gzip = { ...zipped, storedBytes: zipped.stored };
        }
      } finally {
        await worker.stop();
        await client.close();
        await sandbox.stop();
      }
    }

    const rowsOut: (string | number)[][] = [];
    for (const entry of perSize) {
      const a = median(entry.kit.map((r) => r.mbPerS));
      const b = median(entry.baseline.map((r) => r.mbPerS));
      const r = median(entry.kit.map((k, i) => k.mbPerS / entry.baseline[i]!.mbPerS));
      const at = (runs: Run[], value: number) =>
        runs.reduce((best, x) => (Math.abs(x.mbPerS - value) < Math.abs(best.mbPerS - value) ? x : best));
      const ka = at(entry.kit, a);
      const bb = at(entry.baseline, b);
      rowsOut.push(
        [
          label(entry.target),
          'A signal-kit intentExport → S3 (no compression)',
          num(a, 0),
          secs(ka.ms),
          mib(entry.kitPeakKb),
          num(ka.cpuS, 1),
        ],
        [
          label(entry.target),
          'B download piped into Upload',
          num(b, 0),
          secs(bb.ms),
          mib(Math.max(...entry.baseline.map((x) => x.peakKb))),
          num(bb.cpuS, 1),
        ],
        [label(entry.target), 'ratio A/B', `${num(r, 2)}×`, '', '', ''],
      );
      if (entry.gzip) {
        rowsOut.push([
          label(entry.target),
          `A signal-kit, gzip (${label(entry.gzip.storedBytes)} stored)`,
          num(entry.gzip.mbPerS, 0),
          secs(entry.gzip.ms),
          mib(entry.gzip.peakKb),
          num(entry.gzip.cpuS, 1),
        ]);
      }
    }
    const small = perSize[0]!;
    const large = perSize[perSize.length - 1]!;
    return {
      name: 'export-streaming',
      size,
      title: `export-streaming: intent export downloads of ${sizes.map(label).join(' and ')} (${LINE_BYTES}-byte JSONL lines) into S3 (versitygw); MB/s = 10^6 bytes per second of the download-to-S3 step (A: the downloadIntentExport activity, from the workflow history; B: the script); median of ${rounds} alternating round(s).`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: { columns: ['download', 'run', 'MB/s', 'time', 'peak RSS', 'CPU s (process)'], rows: rowsOut },
      metrics: { machine: machine(), sizes: perSize },
      checks: {
        ...checks,
        // The claim: memory does not follow the file. Generous slack for GC timing; a leak would be ~4× here.
        'kit worker peak RSS does not grow with the file size': large.kitPeakKb <= small.kitPeakKb * 1.25 + 32 * 1024,
        ...Object.fromEntries(
          perSize.map((e) => [
            `${label(e.target)}: kit worker peak RSS within its idle RSS + 150 MiB`,
            e.kitPeakKb <= e.kitIdleKb + 150 * 1024,
          ]),
        ),
      },
      notes: [
        `Peak RSS of the signal-kit worker (a fresh process per size, whole lifetime): ${perSize.map((e) => `${label(e.target)} → ${peakOverIdle(e.kitPeakKb, e.kitIdleKb)}`).join(', ')}. Idle: the worker's RSS once it polls, before any job.`,
        'The sandbox that serves the download runs in the benchmark process and shares the cores with both sides.',
      ],
    };
  } finally {
    s3.destroy();
    await bench.stop();
  }
}

export const benchmark: Benchmark = {
  name: 'export-streaming',
  description: 'intent export download into S3: intentExport vs download piped into Upload, MB/s and worker RSS',
  run,
};
