/**
 * The retry schedules the docs promise (docs/what-holds.md, docs/command-line.md), as the product configures them (no test override), and the exit code 4
 * they end in, end to end:
 * - `verify-emails --wait` with every upstream check failing asks again after 2, 10, 30 and 90 s (five tries in
 *   all, free), then ends `completed_with_errors` and exits 4;
 * - a webhook event the intake enqueued, to a destination that always fails, is attempted 8 times over about 28 hours
 *   (the Svix schedule, ±10 % jitter), then dead-lettered;
 * - `schedule run --wait` of a push that cannot reach every signal exits 4.
 * The workers run a fast clock (test/fixtures/fast-timers.ts): each wait the workflow asks for is read from the
 * history, and waited a thousandth of it or less.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import type { PushResult } from '../../activities/push/types.ts';
import { webhookDeliveryConfig } from '../../config/webhook-destinations.ts';
import { temporalEnqueue } from '../../intake/temporal-enqueue.ts';
import { runCli } from '../../testkit/cli-process.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { startWorker, workflowsPath } from '../../workers/worker.ts';
import type { DeliverSignalEventResult } from '../../workflows/webhook-delivery.ts';
import { requestedWaits } from '../helpers/fast-timers.ts';
import { runScheduleCli } from '../helpers/schedule-cli.ts';
import { acmeSignalEvent } from '../helpers/signal-event.ts';
import { callsTo, chargedSince, PATHS } from '../promises/oracle.ts';

const fastTimers = fileURLToPath(new URL('../fixtures/fast-timers.ts', import.meta.url));
const NOW = Date.UTC(2026, 2, 1, 6);

describe('default retry schedules as configured, and exit 4 end to end', () => {
  let env: JobEnv;
  let dir: string;
  let endpoint: Server;
  let hits = 0;

  beforeAll(async () => {
    const [started, bundle, folder] = await Promise.all([
      startJobEnv({ sandbox: { seed: 73, clock: () => NOW, faults: { verifyUpstreamFailureRate: 1 } } }),
      bundleWorkflowCode({
        workflowsPath: workflowsPath(),
        workflowInterceptorModules: [fastTimers],
        logger: new DefaultLogger('WARN'),
      }),
      tempDir('default-schedules'),
    ]);
    env = started;
    dir = folder;
    endpoint = createServer((req, res) => {
      req.resume();
      hits++;
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    await startWorker({
      config: env.config(),
      workflowBundle: bundle,
      webhooks: webhookDeliveryConfig({
        destinations: [
          {
            id: 'crm',
            kind: 'http',
            url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`,
            secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          },
        ],
        deadLetterUrl: pathToFileURL(join(dir, 'dead')).href,
        allowlist: ['127.0.0.1/32'],
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
    await new Promise<void>((resolve) => (endpoint ? endpoint.close(() => resolve()) : resolve()));
    await removeTempDirs();
  });

  it('verify-emails: upstream failures are asked again after 2, 10, 30 and 90 s, then the job exits 4', async () => {
    const emails = ['ana@acme.com', 'bo@globex.com', 'cy@initech.com'];
    await writeFile(join(dir, 'emails.csv'), `email\n${emails.join('\n')}\n`);
    const mark = env.sandbox.truth.lastCall();
    const args = ['verify-emails', '--input', join(dir, 'emails.csv'), '--output', join(dir, 'out')];
    const done = await runCli([...args, '--job-id', 'upstream-down', '--wait'], env.childEnv(), 120_000);
    expect(done.code, done.stderr).toBe(4);
    const result = JSON.parse(done.stdout) as JobResult;
    expect(result.status).toBe('completed_with_errors');
    // Five tries of the same chunk, all free (spec: an upstream failure costs nothing).
    expect(callsTo(env.sandbox, PATHS.verifyBulk, mark)).toHaveLength(5);
    expect(chargedSince(env.sandbox, mark)).toBe(0);
    const history = await env.client.workflow.getHandle('upstream-down').fetchHistory();
    expect(requestedWaits(history.events!)).toEqual([2_000, 10_000, 30_000, 90_000]);
  }, 150_000);

  it('webhook delivery: 8 attempts over about 28 hours on the default schedule, then a dead letter', async () => {
    const enqueue = temporalEnqueue({ client: env.client, taskQueue: env.config().taskQueue });
    const event = acmeSignalEvent({ title: 'Acme opens an office', data: {} });
    const started = await enqueue(event, { receivedAt: new Date() });
    const workflowId = started?.workflowId;
    expect(workflowId).toBeDefined();
    const before = hits;
    const handle = env.client.workflow.getHandle(workflowId!);
    const result = (await handle.result()) as DeliverSignalEventResult;
    expect(result.destinations).toMatchObject([{ id: 'crm', outcome: 'dead_lettered' }]);
    expect(hits - before).toBe(8);
    const waits = requestedWaits((await handle.fetchHistory()).events!);
    const promised = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
    expect(waits).toHaveLength(promised.length);
    for (const [i, wait] of waits.entries()) {
      expect(wait, `wait ${i + 1}`).toBeGreaterThanOrEqual(promised[i]! * 0.9);
      expect(wait, `wait ${i + 1}`).toBeLessThanOrEqual(promised[i]! * 1.1);
    }
    const hours = waits.reduce((sum, w) => sum + w, 0) / 3_600_000;
    expect(hours).toBeGreaterThan(25);
    expect(hours).toBeLessThan(31);
  }, 120_000);

  it('schedule run --wait: a push that cannot reach every new signal exits 4', async () => {
    const watchlist = join(dir, 'watchlist.csv');
    await writeFile(watchlist, 'domain\nflood-co.com\nquiet-co.com\n');
    // More new signals of one type than one call returns (500): the oldest are unreachable this run.
    env.sandbox.emitSignals({ count: 600, domain: 'flood-co.com', signal_types: ['news'] });
    const config = env.config();
    const cli = (...argv: string[]) => runScheduleCli<PushResult>({ client: env.client, temporal: config }, argv);
    const output = pathToFileURL(join(dir, 'push')).href;
    const since = new Date(NOW - 86_400_000).toISOString();
    const create = ['create', '--name', 'flood', '--watchlist', pathToFileURL(watchlist).href, '--output', output];
    expect((await cli(...create, '--every', '1d', '--since', since)).code).toBe(0);
    const run = await cli('run', 'flood', '--wait');
    expect(run.out.status).toBe('completed_with_errors');
    expect(run.code).toBe(4);
  }, 120_000);
});
