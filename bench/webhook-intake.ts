/**
 * webhook-intake: `signal-kit webhooks serve` (its own process) under signed `signal.created` events posted from
 * loopback at rising rates for a bounded time, with a worker process delivering each accepted event to a loopback
 * HTTP destination. Accepted events/s and acknowledgement latency per step; at the end the destination must have
 * received every accepted event. Baseline in the same run, first: a plain loop of `client.workflow.start` against
 * the same Temporal server (on a queue nobody polls), the server's own ceiling for starting workflows here. Per step,
 * the p99 baseline: the same bare starts offered at the step's rate at the same time as the intake's events, sends
 * taking the two in turn, so that both see the same server (the intake's deliveries, compaction, GC, other load).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { generateWebhookSecret, signWebhook, verifyWebhook } from '../connectors/webhooks/signature.ts';
import { signalCreatedEvent } from '../testkit/signal-event.ts';
import { logger, startBenchEnv } from './lib/env.ts';
import { mib, num, peakOverIdle, ratio } from './lib/format.ts';
import { machine } from './lib/machine.ts';
import { cliMain, ownCpuSeconds, startNode, startWorkerProcess } from './lib/proc.ts';
import { quantile } from './lib/stats.ts';
import type { Benchmark, BenchResult, RunOptions, Size } from './lib/types.ts';

export const SIZES = {
  // Steps as shares of the measured workflow-start ceiling. Each step offers the intake and the bare starts at its
  // rate at the same time, interleaved, for stepMs (at least minSamples each): the server takes twice the share, so
  // the load crosses the ceiling (the last step offers 1.25 × the ceiling in all) without queueing past the
  // receiver's enqueue timeout.
  full: {
    baselineMs: 10_000,
    baselineConcurrency: 32,
    steps: [0.0625, 0.125, 0.25, 0.375, 0.5, 0.625],
    stepMs: 8_000,
    minSamples: 240,
    drainMs: 10 * 60_000,
  },
  smoke: {
    baselineMs: 1_000,
    baselineConcurrency: 8,
    steps: [0.05, 0.1],
    stepMs: 1_000,
    minSamples: 0,
    drainMs: 60_000,
  },
} as const;

/** Requests in flight at most; past it the generator skips a send (and counts it) instead of queueing. */
const MAX_IN_FLIGHT = 512;

/** One side of a step (the intake, or the bare starts): what was sent, how it was answered, how fast. */
interface OpenLoopResult {
  sent: number;
  skipped: number;
  accepted: number;
  rejected: number;
  failed: number;
  /** Accepted over the side's own time (see offerInterleaved). */
  acceptedPerS: number;
  p50Ms: number;
  p99Ms: number;
  /** Every acknowledgement time of the side, in ms, in send order: the pooled samples behind p50 and p99. */
  latenciesMs: number[];
}

interface StepResult extends OpenLoopResult {
  offeredPerS: number;
  /** Bare `client.workflow.start` calls offered at the same rate, on the same server, interleaved with the intake's. */
  bareStarts: OpenLoopResult;
  /** The step's p99 acknowledgement over the bare starts' p99, both from the step's pooled samples (goal: ≤ 1.5). */
  p99Ratio: number;
  /** 1-minute load average at the end of the step (the machine may be shared). */
  loadAvg: number;
}

/**
 * Offers each of `sends` at `rate` per second for `ms`, open loop and at the same time: one stream at `rate` times
 * the number of sides, whose sends take the sides in turn (side 0 first), so that each side's sends are evenly
 * spaced at `rate` and every moment's background (GC, server compaction, the intake's deliveries, the machine's other
 * load) falls on both alike. A send is due at its time whatever the earlier ones do, and is skipped (counted) when
 * MAX_IN_FLIGHT are pending. Resolves once every answer is in.
 *
 * A side's accepted/s is its accepted count over the time from the first send to its last answer: the offered rate
 * while the other end keeps up; past that, with two sides, its share of a server that also serves the other side.
 */
async function offerInterleaved(
  rate: number,
  ms: number,
  inFlight: { count: number },
  sends: readonly (() => Promise<boolean>)[],
): Promise<OpenLoopResult[]> {
  const sides = sends.map(() => ({
    step: { sent: 0, skipped: 0, accepted: 0, rejected: 0, failed: 0 },
    latencies: [] as number[],
    lastDone: 0,
  }));
  const pending: Promise<void>[] = [];
  const streamRate = rate * sends.length;
  const total = Math.round((rate * ms) / 1000) * sends.length;
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const side = sides[i % sends.length]!;
    const send = sends[i % sends.length]!;
    const wait = t0 + (i * 1000) / streamRate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.count >= MAX_IN_FLIGHT) {
      side.step.skipped += 1;
      continue;
    }
    side.step.sent += 1;
    inFlight.count += 1;
    const sentAt = performance.now();
    const slot = side.latencies.length;
    side.latencies.push(Number.NaN);
    pending.push(
      send()
        .then((ok) => {
          const done = performance.now();
          side.lastDone = Math.max(side.lastDone, done);
          side.latencies[slot] = done - sentAt;
          if (ok) side.step.accepted += 1;
          else side.step.rejected += 1;
        })
        .catch(() => {
          side.step.failed += 1;
        })
        .finally(() => {
          inFlight.count -= 1;
        }),
    );
  }
  await Promise.all(pending);
  return sides.map((side) => {
    const latencies = side.latencies.filter((ms) => !Number.isNaN(ms));
    return {
      ...side.step,
      acceptedPerS: (side.step.accepted / Math.max(ms, side.lastDone - t0)) * 1000,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      latenciesMs: latencies.map((ms) => Math.round(ms * 10) / 10),
    };
  });
}

export async function run(size: Size, options: RunOptions = {}): Promise<BenchResult> {
  const log = logger('webhook-intake', options.log);
  const { baselineMs, baselineConcurrency, steps, stepMs, minSamples, drainMs } = SIZES[size];
  const startedAt = new Date();
  const bench = await startBenchEnv({});
  const { env } = bench;
  const tag = randomUUID().slice(0, 8);

  // The loopback destination: counts verified deliveries per signal id.
  const destinationSecret = generateWebhookSecret();
  const delivered = new Map<string, number>();
  let unverified = 0;
  const destination = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        verifyWebhook({ headers: req.headers, body, secrets: destinationSecret });
        const id = (JSON.parse(body.toString('utf8')) as { signal: { id: string } }).signal.id;
        delivered.set(id, (delivered.get(id) ?? 0) + 1);
      } catch {
        unverified += 1;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  const destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/hook`;

  const receiverSecret = generateWebhookSecret();
  const worker = await startWorkerProcess(
    'webhook-worker',
    env.childEnv({
      SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([
        { id: 'bench', kind: 'http', url: destinationUrl, secret: destinationSecret },
      ]),
      SIGNAL_KIT_WEBHOOK_ALLOWLIST: '127.0.0.1/32',
      SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL: pathToFileURL(`${bench.dir}/webhooks`).href,
    }),
  );
  const receiver = startNode('webhook-receiver', [cliMain, 'webhooks', 'serve', '--port', '0'], {
    ...env.childEnv({ SIGNAL_KIT_WEBHOOK_SECRETS: receiverSecret }),
  });
  let pool: Pool | undefined;
  try {
    let webhookUrl: string | undefined;
    for (const deadline = Date.now() + 60_000; !webhookUrl; ) {
      const line = receiver.proc
        .outputTail()
        .split('\n')
        .find((l) => l.startsWith('{"listening":true'));
      if (line) webhookUrl = (JSON.parse(line) as { webhookUrl: string }).webhookUrl;
      else if (receiver.proc.hasExited() || Date.now() > deadline) {
        throw new Error(`webhooks serve did not start:\n${receiver.proc.outputTail()}`);
      } else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const target = new URL(webhookUrl);

    // Baseline: the server's own ceiling for starting workflows, measured first while nothing else runs.
    log(`baseline: client.workflow.start × ${baselineConcurrency} loops for ${baselineMs / 1000} s`);
    const idleQueue = `bench-unpolled-${tag}`;
    const startLatencies: number[] = [];
    let started = 0;
    let startErrors = 0;
    const baselineEnd = performance.now() + baselineMs;
    const baselineStart = performance.now();
    await Promise.all(
      Array.from({ length: baselineConcurrency }, async (_, loop) => {
        for (let n = 0; performance.now() < baselineEnd; n++) {
          const t0 = performance.now();
          try {
            await env.client.workflow.start('deliverSignalEvent', {
              taskQueue: idleQueue,
              workflowId: `signal-baseline-${tag}-${loop}-${n}`,
              args: [{ event: signalCreatedEvent(`baseline-${tag}-${loop}-${n}`) }],
              workflowIdReusePolicy: 'REJECT_DUPLICATE',
              workflowIdConflictPolicy: 'FAIL',
            });
            started += 1;
            startLatencies.push(performance.now() - t0);
          } catch {
            startErrors += 1;
          }
        }
      }),
    );
    const baselineRate = (started / (performance.now() - baselineStart)) * 1000;
    log(`baseline: ${num(baselineRate, 0)} starts/s`);

    // The load: open loop, each step at a fixed rate for stepMs, signed like the service signs.
    pool = new Pool(target.origin, { connections: 128, pipelining: 1 });
    // CPU of every process while the load runs: where the intake's time goes.
    const loadStart = performance.now();
    const driverCpu = ownCpuSeconds();
    for (const watch of [receiver.watch, worker.watch, bench.temporal]) watch.mark();
    const results: StepResult[] = [];
    const accepted = new Set<string>();
    let counter = 0;
    let bareCounter = 0;
    const inFlight = { count: 0 };
    const postEvent = async (): Promise<boolean> => {
      const signalId = `bench-${tag}-${counter++}`;
      const body = JSON.stringify(signalCreatedEvent(signalId));
      const headers = signWebhook({ id: `msg_${signalId}`, timestamp: new Date(), body, secret: receiverSecret });
      const response = await pool!.request({
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      await response.body.dump();
      if (response.statusCode !== 202) return false;
      accepted.add(signalId);
      return true;
    };
    // The same start the intake makes for an event (same input, same id policies), straight from a client.
    const bareStart = async (): Promise<boolean> => {
      const n = bareCounter++;
      await env.client.workflow.start('deliverSignalEvent', {
        taskQueue: idleQueue,
        workflowId: `signal-bare-${tag}-${n}`,
        args: [{ event: signalCreatedEvent(`bare-${tag}-${n}`) }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
      });
      return true;
    };
    // The intake's capacity, alone on the server and first, like the ceiling, at the top step's rate in all: in the
    // steps it shares the server with the bare starts, and later it would also share it with the deliveries the
    // steps leave behind.
    const aloneRate = Math.max(1, Math.round(baselineRate * 2 * Math.max(...steps)));
    log(`intake alone: ${aloneRate}/s for ${stepMs / 1000} s`);
    const [alone] = (await offerInterleaved(aloneRate, stepMs, inFlight, [postEvent])) as [OpenLoopResult];
    log(`intake alone: ${num(alone.acceptedPerS, 0)} accepted/s`);
    // Its deliveries are done before the steps begin, so that they do not weigh on the first step only.
    for (const until = performance.now() + drainMs; performance.now() < until; ) {
      if ([...accepted].every((id) => delivered.has(id))) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    for (const [index, share] of steps.entries()) {
      const rate = Math.max(1, Math.round(baselineRate * share));
      // Enough samples per side for a p99 that is not just the slowest one; which side sends first alternates.
      const ms = Math.max(stepMs, Math.ceil((minSamples / rate) * 1000));
      const bareFirst = index % 2 === 0;
      log(`step: ${rate}/s each for the intake and bare starts, interleaved, for ${ms / 1000} s`);
      const [first, second] = (await offerInterleaved(
        rate,
        ms,
        inFlight,
        bareFirst ? [bareStart, postEvent] : [postEvent, bareStart],
      )) as [OpenLoopResult, OpenLoopResult];
      const [bareStarts, intake] = bareFirst ? [first, second] : [second, first];
      log(`step ${rate}/s: p99 intake ${num(intake.p99Ms, 1)} ms, bare starts ${num(bareStarts.p99Ms, 1)} ms`);
      results.push({
        offeredPerS: rate,
        ...intake,
        bareStarts,
        p99Ratio: intake.p99Ms / bareStarts.p99Ms,
        loadAvg: loadavg()[0]!,
      });
    }

    const loadSeconds = (performance.now() - loadStart) / 1000;
    const loadCpu = {
      receiver: receiver.watch.cpuSinceMark(),
      worker: worker.watch.cpuSinceMark(),
      temporal: bench.temporal.cpuSinceMark(),
      driver: ownCpuSeconds() - driverCpu,
    };
    log(`waiting for ${accepted.size} deliveries`);
    const drainStart = performance.now();
    const deliveredAccepted = () => [...accepted].filter((id) => delivered.has(id)).length;
    while (deliveredAccepted() < accepted.size && performance.now() - drainStart < drainMs) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const deliveredCount = deliveredAccepted();
    const strays = [...delivered.keys()].filter((id) => !accepted.has(id)).length;
    const redeliveries = [...delivered.values()].reduce((sum, n) => sum + n - 1, 0);
    worker.watch.sample();
    receiver.watch.sample();

    const bestAcceptedPerS = Math.max(alone.acceptedPerS, ...results.map((r) => r.acceptedPerS));
    const m = machine();
    return {
      name: 'webhook-intake',
      size,
      title: `webhook-intake: signed signal.created events posted from loopback to \`signal-kit webhooks serve\` (own process; each accepted event starts deliverSignalEvent) alone at the top rate for ${stepMs / 1000} s (its capacity), then at rising rates; a worker process delivers to a loopback HTTP destination. Baselines on the same Temporal dev server: ${baselineConcurrency} concurrent loops of client.workflow.start for ${baselineMs / 1000} s (the ceiling that sets the step rates), and per step bare client.workflow.start calls offered open loop at the step's rate at the same time as the intake's events, sends taking the two in turn (${stepMs / 1000} s and at least ${minSamples} of each), for the p99 ratio, both p99s from the step's pooled samples.`,
      startedAt: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      table: {
        columns: [
          'run',
          'offered/s',
          'accepted/s',
          'p50 ack',
          'p99 ack',
          'bare starts at the same rate: p50, p99 (accepted/s)',
          'p99 ratio intake / bare (goal ≤ 1.5)',
          'load avg',
          'accepted',
          'not accepted (4xx/5xx, errors, skipped)',
        ],
        rows: [
          ...results.map((r) => [
            'intake step',
            r.offeredPerS,
            num(r.acceptedPerS, 0),
            `${num(r.p50Ms, 1)} ms`,
            `${num(r.p99Ms, 1)} ms`,
            `${num(r.bareStarts.p50Ms, 1)} ms, ${num(r.bareStarts.p99Ms, 1)} ms (${num(r.bareStarts.acceptedPerS, 0)})`,
            ratio(r.p99Ms, r.bareStarts.p99Ms),
            num(r.loadAvg, 1),
            r.accepted,
            `${r.rejected}, ${r.failed}, ${r.skipped}`,
          ]),
          [
            'baseline: client.workflow.start loop',
            '',
            num(baselineRate, 0),
            `${num(quantile(startLatencies, 0.5), 1)} ms`,
            `${num(quantile(startLatencies, 0.99), 1)} ms`,
            '',
            '',
            '',
            started,
            `${startErrors}, 0, 0`,
          ],
          [
            'intake alone (capacity)',
            aloneRate,
            num(alone.acceptedPerS, 0),
            `${num(alone.p50Ms, 1)} ms`,
            `${num(alone.p99Ms, 1)} ms`,
            '',
            '',
            num(loadavg()[0]!, 1),
            alone.accepted,
            `${alone.rejected}, ${alone.failed}, ${alone.skipped}`,
          ],
          ['ratio best accepted/s / baseline', '', ratio(bestAcceptedPerS, baselineRate), '', '', '', '', '', '', ''],
          [
            'delivered to the destination at the end',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            `${deliveredCount} of ${accepted.size}`,
            `after ${num(drainSeconds, 0)} s of draining`,
          ],
        ],
      },
      metrics: {
        machine: m,
        baseline: {
          started,
          startErrors,
          ratePerS: baselineRate,
          p50Ms: quantile(startLatencies, 0.5),
          p99Ms: quantile(startLatencies, 0.99),
        },
        steps: results,
        accepted: accepted.size,
        delivered: deliveredCount,
        redeliveries,
        strays,
        unverified,
        drainSeconds,
        loadSeconds,
        loadCpu,
        workerPeakKb: worker.watch.peakKb,
        workerIdleKb: worker.idleKb,
        receiverPeakKb: receiver.watch.peakKb,
        alone,
        ratio: bestAcceptedPerS / baselineRate,
      },
      checks: {
        'delivered equals accepted': deliveredCount === accepted.size,
        'nothing delivered that was not accepted': strays === 0,
        'every delivery signed': unverified === 0,
        'events were accepted': accepted.size > 0,
      },
      notes: [
        `Bare starts go from the benchmark process to a task queue no worker polls (same input and id policies as the intake's starts); the intake's own starts are executed and delivered while later runs go on.`,
        `CPU s during the ${num(loadSeconds, 0)} s of load (intake and bare-start runs) (${m.cores} cores): receiver ${num(loadCpu.receiver, 1)}, worker (delivering meanwhile) ${num(loadCpu.worker, 1)}, Temporal server ${num(loadCpu.temporal, 1)}, load generator + destination ${num(loadCpu.driver, 1)}.`,
        `Peak RSS: receiver ${mib(receiver.watch.peakKb)}, worker ${peakOverIdle(worker.watch.peakKb, worker.idleKb)}. Redeliveries seen at the destination (at-least-once): ${redeliveries}.`,
        `The load generator and the destination run in the benchmark process; receiver, worker and Temporal server in their own; all share ${m.cores} cores, so deliveries compete with intake while a step runs.`,
      ],
    };
  } finally {
    await pool?.close();
    await receiver.stop();
    await worker.stop();
    destination.closeAllConnections();
    await new Promise<void>((resolve) => destination.close(() => resolve()));
    await bench.stop();
  }
}

export const benchmark: Benchmark = {
  name: 'webhook-intake',
  description: 'signed events at rising rates into webhooks serve: accepted/s, ack p50/p99, delivered == accepted',
  run,
};
