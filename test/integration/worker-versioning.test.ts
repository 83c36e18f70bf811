/**
 * A deploy with changed workflow code does not break running jobs. `signal-kit build-workflows` writes the bundle of
 * this release and of a next release whose `deliverSignalEvent` records a different history; each runs in a
 * `signal-kit worker` started from its bundle, versioned by Worker Deployment with the bundle's hash as build id.
 * A delivery started on the first version keeps running there (pinned) after the second becomes current, and ends
 * delivered; a workflow started after the deploy runs the new code; once the old workers are gone, paid jobs still run.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { DeliverSignalEventResult } from '../../workflows/webhook-delivery.ts';
import { acmeSignalEvent } from '../helpers/signal-event.ts';

const nextRelease = fileURLToPath(new URL('../fixtures/workflows-next-release.ts', import.meta.url));
const DEPLOYMENT = 'signal-kit-test';

let env: JobEnv;
let dir: string;
let endpoint: Server;
let hits = 0;
let open = false;
const workers: ChildWorker[] = [];

async function buildBundle(name: string, extra: string[] = []): Promise<{ bundle: string; buildId: string }> {
  const result = await runCli(['build-workflows', '--output', join(dir, name), ...extra], env.childEnv(), 120_000);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { bundle: string; buildId: string };
}

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a prebuilt, versioned worker', () => {
  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 2 } });
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-versions-'));
    endpoint = createServer((req, res) => {
      req.resume();
      hits++;
      res.writeHead(open ? 204 : 503).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await new Promise<void>((resolve) => (endpoint ? endpoint.close(() => resolve()) : resolve()));
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps a running delivery on the version that started it while new workflows run the new code', async () => {
    const current = await buildBundle('current');
    const next = await buildBundle('next', ['--workflows', nextRelease]);
    expect(existsSync(current.bundle) && existsSync(join(dir, 'current', 'workflow-bundle.json'))).toBe(true);
    expect(next.buildId).not.toBe(current.buildId);

    const workerEnv = (bundle: string) =>
      env.childEnv({
        SIGNAL_KIT_WORKFLOW_BUNDLE: bundle,
        SIGNAL_KIT_DEPLOYMENT_NAME: DEPLOYMENT,
        SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([
          {
            id: 'crm',
            kind: 'http',
            url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`,
            secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          },
        ]),
        SIGNAL_KIT_WEBHOOK_ALLOWLIST: '127.0.0.1/32',
        SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL: pathToFileURL(join(dir, 'dead')).href,
      });
    workers.push(await startChildWorker(workerEnv(current.bundle), 90_000, { args: ['--make-current'] }));
    await until('the first version to be current', () => workers[0]!.output().includes('this version is now current'));
    // A paid job on the first version starts the account's rate limiter there.
    const rows = ['website', ...Array.from({ length: 150 }, (_, i) => `firm${i}.com`)];
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    const before = await runCli(
      ['enrich', '--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--job-id', 'before-deploy', '--wait'],
      env.childEnv(),
      120_000,
    );
    expect(before.code, before.stderr).toBe(0);

    const { taskQueue } = env.config();
    const event = acmeSignalEvent({ title: 'Acme hires', data: {} });
    const delivery = await env.client.workflow.start('deliverSignalEvent', {
      taskQueue,
      workflowId: `signal-${event.signal.id}`,
      args: [{ event, schedule: { delaysMs: [0, ...Array(40).fill(1_000)], jitterRatio: 0 } }],
    });
    await until('the first attempt to fail', () => hits >= 1);

    // The deploy: the next release's workers start from their bundle and become current.
    workers.push(await startChildWorker(workerEnv(next.bundle), 90_000, { args: ['--make-current'] }));
    await until('the next version to be current', () => workers[1]!.output().includes('this version is now current'));
    const answer = await env.client.workflow.execute('smokeWorkflow', {
      taskQueue,
      workflowId: `smoke-${randomUUID()}`,
      args: ['hello'],
    });
    expect(answer).toBe('next release: hello');

    const attemptsBefore = hits;
    await until('another attempt after the deploy', () => hits > attemptsBefore);
    open = true;
    const result = (await delivery.result()) as DeliverSignalEventResult;
    expect(result.destinations).toMatchObject([{ id: 'crm', outcome: 'delivered' }]);
    const described = await delivery.describe();
    const info = described.raw.workflowExecutionInfo?.versioningInfo;
    expect(info?.deploymentVersion?.buildId ?? info?.version).toContain(current.buildId);

    // The old version drained: its workers go, and paid jobs still run (the account's rate limiter, a workflow that
    // outlives deploys and was started by the old version, has moved to the current one).
    await workers[0]!.stop();
    const job = await runCli(
      ['enrich', '--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--job-id', 'after-deploy', '--wait'],
      env.childEnv(),
      120_000,
    );
    expect(job.code, job.stderr).toBe(0);
    expect(JSON.parse(job.stdout)).toMatchObject({ status: 'completed', counts: { distinct: 150 } });
  }, 300_000);
});
