/**
 * Promise: every `signal.created` event the intake accepts lands in the bucket exactly once, also when the service
 * delivers it again (an answer lost on the way back makes the service retry a delivery the kit already took).
 * Real parts: the sandbox's subscriptions and deliveries, the kit's receiver (`webhooks serve`), a worker with a
 * bucket destination on S3 (versitygw), Temporal. Counted from the bucket, against the signals the sandbox emitted.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CollectorManifest } from '../../activities/collector.ts';
import { startWebhookIntake, type WebhookIntake } from '../../cli/webhook-service.ts';
import { openStore } from '../../config/storage.ts';
import { webhookDeliveryConfig } from '../../config/webhook-destinations.ts';
import { SignalClient } from '../../connectors/signal-api/client.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { startWorker } from '../../workers/worker.ts';

const LAKE = 's3://lake/signals';
const DESTINATION = 'lake';

/**
 * In front of the receiver: passes every delivery on, but tells the service 502 after the receiver accepted every
 * third new message (the answer lost on its way back), so that the service delivers those again.
 */
async function startLossyHop(target: string): Promise<{ url: string; lost: number; close(): Promise<void> }> {
  const seen = new Set<string>();
  const state = { lost: 0, count: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const messageId = String(req.headers['webhook-id']);
      const first = !seen.has(messageId);
      seen.add(messageId);
      const forward = httpRequest(
        `${target}${req.url}`,
        { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => out.push(chunk));
          answer.on('end', () => {
            const accepted = (answer.statusCode ?? 0) < 300;
            if (first && accepted && ++state.count % 3 === 0) {
              state.lost += 1;
              res.writeHead(502).end();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(out));
          });
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get lost() {
      return state.lost;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('webhook intake into a bucket collector', () => {
  let env: JobEnv;
  let worker: WorkerHandle;
  let intake: WebhookIntake;
  let hop: Awaited<ReturnType<typeof startLossyHop>>;
  let api: SignalClient;

  beforeAll(async () => {
    env = await startJobEnv({ s3: true, sandbox: { seed: 61, webhookRetryDelaysMs: [0, 200, 500, 1000] } });
    await env.createBuckets('lake');
    const config = env.config();
    worker = await startWorker({
      config,
      workflowBundle: env.bundle,
      webhooks: webhookDeliveryConfig({
        destinations: [{ id: DESTINATION, kind: 'bucket', url: LAKE, max_events: 25, max_age_ms: 500 }],
        deadLetterUrl: 's3://lake/dead-letters',
      }),
    });
    api = new SignalClient({ baseUrl: env.sandbox.url, apiKey: 'sk_test_1' });
  });
  afterAll(async () => {
    await intake?.close();
    await hop?.close();
    await worker?.shutdown();
    await api?.close();
    await env?.stop();
  });

  it('every accepted event is in the bucket once, redeliveries included', async () => {
    // Subscribe first (the service makes the signing secret), then serve with that secret and point the
    // subscription at the receiver, through the hop that loses some answers.
    const subscription = await api.createWebhook({ url: 'http://127.0.0.1:9/webhooks', signal_types: ['news'] });
    const config = env.config();
    intake = await startWebhookIntake({
      serve: { port: 0, host: '127.0.0.1', path: '/webhooks', auth: 'signature', allowUnauthenticated: false },
      env: { SIGNAL_KIT_WEBHOOK_SECRETS: String(subscription.secret) },
      temporal: config,
      client: env.client,
    });
    hop = await startLossyHop(intake.receiver.url);
    await api.updateWebhook(subscription.webhook_id, { url: `${hop.url}/webhooks` });

    const emitted = [
      ...env.sandbox.emitSignals({ count: 30, signal_types: ['news'] }),
      ...env.sandbox.emitSignals({ count: 30, signal_types: ['news'] }),
    ];
    await env.sandbox.webhooksSettled();
    const ids = new Set(emitted.map((s) => String(s.signal_id)));
    expect(ids.size).toBe(60);
    // The service saw every event through in the end, and had to deliver some again.
    const delivered = env.sandbox.deliveries.filter((d) => (d.status_code ?? 0) >= 200 && (d.status_code ?? 0) < 300);
    expect(new Set(delivered.map((d) => d.signal_id))).toEqual(ids);
    expect(hop.lost).toBeGreaterThan(0);

    // Wait on the bucket, not a clock: the collector's manifest counts every event it wrote.
    const store = openStore(LAKE);
    // Each accepted event is a workflow named after its signal: wait for them all to have handed their event on.
    for (const id of ids) {
      const outcome = (await env.client.workflow.getHandle(`signal-${id}`).result()) as {
        destinations: { outcome: string }[];
      };
      expect(outcome.destinations.map((d) => d.outcome)).toEqual(['collected']);
    }
    const manifestKey = `collector/${DESTINATION}/_manifest.json`;
    await expect
      .poll(
        async () =>
          (await store.exists(manifestKey))
            ? (JSON.parse(await store.readText(manifestKey)) as CollectorManifest).events
            : 0,
        { timeout: 120_000, interval: 250 },
      )
      .toBeGreaterThanOrEqual(ids.size);
    const manifest = JSON.parse(await store.readText(manifestKey)) as CollectorManifest;
    const written: string[] = [];
    for (const part of manifest.parts) {
      for (const line of (await store.readText(part.key.replace(/^signals\//, ''))).split('\n')) {
        if (line) written.push((JSON.parse(line) as { signal: { id: string } }).signal.id);
      }
    }
    expect(manifest.events).toBe(ids.size);
    expect(written).toHaveLength(ids.size);
    expect(new Set(written)).toEqual(ids);
    expect(manifest.parts.flatMap((p) => p.missing ?? [])).toEqual([]);
  }, 300_000);
});
