/**
 * What an operator watches: `signal-kit worker --metrics-port N --health-port N` as a child process, against a
 * Temporal dev server and a sandbox that answers some calls 429. Its Prometheus endpoint, scraped during and after
 * a job, counts what the manifest and the sandbox's own records say happened; its logs are JSON lines that carry the
 * job id, workflow id and activity and never a secret; /readyz follows Temporal going away and coming back, and so
 * does the webhook receiver's.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { startWebhookIntake, type WebhookIntake } from '../../cli/webhook-service.ts';
import { freePort } from '../../devstack/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import type { DeliverSignalEventResult } from '../../workflows/webhook-delivery.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { readJobOutput } from '../helpers/output.ts';
import { acmeSignalEvent } from '../helpers/signal-event.ts';

const API_KEY = `sk_live_${randomBytes(12).toString('hex')}`;
const SECRET_OK = `whsec_${randomBytes(24).toString('base64')}`;
const SECRET_BROKEN = `whsec_${randomBytes(24).toString('base64')}`;
const LIMIT = 2;
const DOMAINS = 230;

let worker: ChildWorker;
let endpoint: Server;
let metricsUrl: string;
let healthUrl: string;
let job: JobResult;

/** Prometheus text → `name{labels}` → value (labels as printed, sorted by the exporter). */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

/** Sum of every series of `name` whose labels include each of `labels` (`key="value"`). */
function sum(metrics: Map<string, number>, name: string, ...labels: string[]): number {
  let total = 0;
  for (const [series, value] of metrics) {
    const [metric] = series.split('{');
    if (metric === name && labels.every((label) => series.includes(label))) total += value;
  }
  return total;
}

async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  return parseMetrics(await response.text());
}

async function readyz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('worker metrics, logs and health', () => {
  const jobEnv = useJobEnv('observe', {
    // Its own server: the health checks follow it going away and coming back.
    ownTemporal: true,
    // Slow answers and one batch at a time (--concurrency 1) leave most of a second between two batches' ends.
    sandbox: { seed: 21, faults: { latencyMs: 800, rateLimitBurst: { every: 2, length: 1, retryAfterS: 1 } } },
  });

  beforeAll(async () => {
    const { env, dir } = jobEnv;
    env.sandbox.accounts.addKey(env.sandbox.accounts.get()!.id, API_KEY);
    const rows = ['website', ...Array.from({ length: DOMAINS }, (_, i) => `company${i}.com`)];
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    endpoint = createServer((req, res) => {
      req.resume();
      res.writeHead(req.url === '/ok' ? 204 : 500).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    healthUrl = `http://127.0.0.1:${healthPort}`;
    worker = await startChildWorker(
      env.childEnv({
        SIGNAL_API_KEY: API_KEY,
        SIGNAL_KIT_LOG_LEVEL: 'debug',
        SIGNAL_KIT_LOG_FORMAT: 'json',
        SIGNAL_KIT_WEBHOOK_DESTINATIONS: JSON.stringify([
          { id: 'crm', kind: 'http', url: `${base}/ok`, secret: SECRET_OK },
          { id: 'broken', kind: 'http', url: `${base}/fail`, secret: SECRET_BROKEN },
        ]),
        SIGNAL_KIT_WEBHOOK_ALLOWLIST: '127.0.0.1/32',
        SIGNAL_KIT_WEBHOOK_DEAD_LETTER_URL: pathToFileURL(join(dir, 'dead')).href,
      }),
      60_000,
      { args: ['--metrics-port', String(metricsPort), '--health-port', String(healthPort)], tailLines: 1_000_000 },
    );
  });
  afterAll(async () => {
    await worker?.stop();
    await new Promise<void>((resolve) => (endpoint ? endpoint.close(() => resolve()) : resolve()));
  });

  it('counts a job as its manifest and the sandbox record it, scraped during and after the job', async () => {
    const { env, dir } = jobEnv;
    const firstCall = env.sandbox.truth.lastCall();
    const running = runCli(
      ['enrich', '--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--limit', String(LIMIT)].concat([
        '--concurrency',
        '1',
        '--job-id',
        'observed',
        '--wait',
      ]),
      env.childEnv({ SIGNAL_API_KEY: API_KEY }),
      120_000,
    );
    // During the job: the endpoint answers with the first batch counted before the last is done.
    const during = await until('a batch counted while the job runs', async () => {
      const metrics = await scrape();
      return sum(metrics, 'signal_kit_rows_written_total') > 0 ? metrics : undefined;
    });
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    job = JSON.parse(result.stdout) as JobResult;
    const { manifest, lines } = await readJobOutput(pathToFileURL(join(dir, 'out')).href, 'observed');
    const after = await scrape();

    const rowsDuring = sum(during, 'signal_kit_rows_written_total', 'job="enrich"');
    expect(rowsDuring).toBeLessThan(manifest.counts.lines);

    const calls = env.sandbox.truth.calls({ after: firstCall, path: '/v1/companies/enrich/bulk' });
    const answered429 = calls.filter((call) => call.status === 429).length;
    const truth = env.sandbox.truth.companySignals(
      Array.from({ length: DOMAINS }, (_, i) => `company${i}.com`),
      {},
    );
    const signals = truth.reduce((total, domain) => total + Math.min(domain.signals.length, LIMIT), 0);
    expect(answered429).toBeGreaterThan(0);

    expect(sum(after, 'signal_kit_credits_charged_total')).toBe(manifest.credits_charged);
    expect(manifest.credits_charged).toBe(2 * signals);
    expect(sum(after, 'signal_kit_api_calls_total', 'status="200"')).toBe(Math.ceil(DOMAINS / 100));
    expect(sum(after, 'signal_kit_api_calls_total', 'status="429"')).toBe(answered429);
    expect(sum(after, 'signal_kit_api_rate_limited_total')).toBe(answered429);
    expect(sum(after, 'signal_kit_rate_limit_wait_milliseconds_total', 'reason="retry_after"')).toBe(
      answered429 * 1000,
    );
    expect(sum(after, 'signal_kit_rows_written_total', 'job="enrich"')).toBe(
      manifest.parts.reduce((total, part) => total + part.lines, 0),
    );
    expect(sum(after, 'signal_kit_rows_written_total', 'job="enrich"')).toBe(lines.length);
    expect(sum(after, 'signal_kit_signals_written_total', 'job="enrich"')).toBe(signals);
    expect(sum(after, 'signal_kit_batches_failed_total')).toBe(manifest.batches.failed);
    // Temporal's own telemetry comes out of the same endpoint, per task queue.
    const apiQueue = env.config().apiTaskQueue;
    expect(sum(after, 'temporal_activity_execution_latency_count', `task_queue="${apiQueue}"`)).toBeGreaterThanOrEqual(
      Math.ceil(DOMAINS / 100),
    );
  });

  it('counts webhook deliveries by outcome and the events it dead-letters', async () => {
    const { env } = jobEnv;
    const event = acmeSignalEvent({ title: 'Acme opens an office', data: { summary: 'an office' } });
    const before = await scrape();
    const result = (await env.client.workflow.execute('deliverSignalEvent', {
      taskQueue: env.config().taskQueue,
      workflowId: `signal-${event.signal.id}`,
      args: [{ event, schedule: { delaysMs: [0, 100, 100], jitterRatio: 0 } }],
    })) as DeliverSignalEventResult;
    const after = await scrape();
    const broken = result.destinations.find((d) => d.id === 'broken')!;
    expect(result.destinations.find((d) => d.id === 'crm')?.outcome).toBe('delivered');
    expect(broken.outcome).toBe('dead_lettered');
    const delta = (name: string, ...labels: string[]) => sum(after, name, ...labels) - sum(before, name, ...labels);
    expect(delta('signal_kit_webhook_deliveries_total', 'outcome="delivered"')).toBe(1);
    expect(delta('signal_kit_webhook_deliveries_total', 'outcome="failed"')).toBe(broken.attempts.length);
    expect(delta('signal_kit_webhook_dead_lettered_total')).toBe(1);
  });

  it('logs JSON lines that name the job, workflow and activity, and never a secret', async () => {
    // The runtime holds log lines briefly to order them; the webhook test's last line may still be on its way.
    const output = await until('the dead-letter log line', async () =>
      worker.output().includes('event dead-lettered') ? worker.output() : undefined,
    );
    for (const secret of [API_KEY, SECRET_OK, SECRET_BROKEN, SECRET_OK.slice(6), SECRET_BROKEN.slice(6)]) {
      expect(output.includes(secret), `a secret (${secret.slice(0, 10)}…) is in the worker's logs`).toBe(false);
    }
    const entries = output
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const written = entries.filter((entry) => entry['msg'] === 'batch written' && entry['jobId'] === job.jobId);
    expect(written).toHaveLength(Math.ceil(DOMAINS / 100));
    for (const entry of written) {
      expect(entry).toMatchObject({ level: 'info', workflowId: job.jobId, activityType: 'enrichBatch' });
    }
    const deadLettered = entries.find((entry) => entry['msg'] === 'event dead-lettered');
    expect(deadLettered).toMatchObject({ level: 'warn', activityType: 'writeDeadLetter' });
    expect(deadLettered?.['signalId']).toEqual(expect.any(String));
  });

  it('/livez and /readyz of the worker and the receiver follow Temporal going away and coming back', async () => {
    const { env } = jobEnv;
    const intake: WebhookIntake = await startWebhookIntake({
      serve: { port: 0, host: '127.0.0.1', path: '/webhooks', auth: 'none', allowUnauthenticated: true },
      env: { SIGNAL_KIT_TASK_QUEUE: env.config().taskQueue },
      temporal: { ...env.config() },
      client: env.client,
    });
    try {
      expect((await fetch(`${healthUrl}/livez`)).status).toBe(200);
      const ready = await readyz(healthUrl);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ ready: true, checks: { workers: { ok: true }, temporal: { ok: true } } });
      expect((await readyz(intake.receiver.url)).status).toBe(200);

      const restarted = env.stack.temporal!.restart({ downMs: 8_000 });
      const down = await until('/readyz to answer 503', async () => {
        const answer = await readyz(healthUrl);
        return answer.status === 503 ? answer : undefined;
      });
      expect(down.body).toMatchObject({ ready: false, checks: { temporal: { ok: false } } });
      expect((await fetch(`${healthUrl}/livez`)).status).toBe(200);
      const receiverDown = await until('the receiver /readyz to answer 503', async () => {
        const answer = await readyz(intake.receiver.url);
        return answer.status === 503 ? answer : undefined;
      });
      expect(receiverDown.body).toMatchObject({ ready: false, checks: { temporal: { ok: false } } });
      await restarted;
      await until('/readyz to answer 200 again', async () =>
        (await readyz(healthUrl)).status === 200 ? true : undefined,
      );
    } finally {
      await intake.close();
    }
  });
});
