/**
 * OpenTelemetry export as the alternative to the Prometheus endpoint: a `signal-kit worker` with
 * `SIGNAL_KIT_OTEL_METRICS_URL` (OTLP over HTTP) pushes Temporal's metrics and the kit's counters to a collector,
 * here a stand-in on 127.0.0.1 that keeps what it receives.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { useJobEnv } from '../helpers/job-env.ts';

let collector: Server;
let worker: ChildWorker | undefined;
const received: { path: string; body: Buffer }[] = [];

describe('worker metrics over OpenTelemetry', () => {
  const jobEnv = useJobEnv('otel', { sandbox: { seed: 4 } });

  beforeAll(async () => {
    const { dir } = jobEnv;
    await writeFile(
      join(dir, 'crm.csv'),
      `website\n${Array.from({ length: 40 }, (_, i) => `otel${i}.com`).join('\n')}\n`,
    );
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        received.push({
          path: req.url ?? '',
          body: req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw,
        });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await worker?.stop();
    await new Promise<void>((resolve) => (collector ? collector.close(() => resolve()) : resolve()));
  });

  it("pushes Temporal's metrics and the kit's counters to the collector", async () => {
    const { env, dir } = jobEnv;
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/metrics`;
    worker = await startChildWorker(
      env.childEnv({ SIGNAL_KIT_OTEL_METRICS_URL: url, SIGNAL_KIT_OTEL_METRICS_HTTP: 'true' }),
    );
    const job = await runCli(
      ['enrich', '--input', join(dir, 'crm.csv'), '--output', join(dir, 'out'), '--wait'],
      env.childEnv(),
      120_000,
    );
    expect(job.code, job.stderr).toBe(0);
    const deadline = Date.now() + 60_000;
    const seen = () => Buffer.concat(received.map((r) => r.body)).toString('latin1');
    while (!(seen().includes('signal_kit_credits_charged') && seen().includes('signal_kit_rows_written'))) {
      if (Date.now() > deadline) throw new Error(`no kit counters among ${received.length} pushes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(received.every((r) => r.path === '/v1/metrics')).toBe(true);
    expect(seen()).toContain('activity_execution_latency');
  });
});
