/**
 * The bucket collector on a real Temporal dev server (and S3 through versitygw): events reach it through
 * deliverSignalEvent → forwardToCollector (staged, then signalWithStart); it rotates parts by count and by time with
 * deterministic names; re-sent input, a retried part write and a full replay of its history never create a second
 * copy of a part; continue-as-new keeps the sequence.
 */

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectorManifest, createCollectorActivities } from '../../activities/collector.ts';
import { readPart } from '../../activities/run/parts.ts';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.ts';
import { openStore } from '../../config/storage.ts';
import { type DestinationInput, webhookDeliveryConfig } from '../../config/webhook-destinations.ts';
import type { Store } from '../../connectors/storage/index.ts';
import { collectorWorkflowId, type WebhookDeliveryConfig } from '../../connectors/webhooks/destinations.ts';
import { type SignalCreatedEvent, SignalCreatedEventSchema } from '../../connectors/webhooks/events.ts';
import { s3ClientFor } from '../../devstack/index.ts';
import type { bucketCollector, CollectorStatus } from '../../workflows/bucket-collector.ts';
import type { deliverSignalEvent } from '../../workflows/webhook-delivery.ts';
import { startWorkflowTestbed, type WorkflowTestbed } from '../helpers/temporal-stack.ts';

const workflowsPath = fileURLToPath(new URL('../../testkit/webhook-workflows.ts', import.meta.url));

function makeEvent(): SignalCreatedEvent {
  return SignalCreatedEventSchema.parse({
    event: 'signal.created',
    signal: {
      id: randomUUID(),
      type: 'hiring-trends',
      company: { name: 'Acme', domain: 'acme.com' },
      title: 'Acme is hiring',
      detected_at: '2026-03-01T12:00:00Z',
      source: 'jobs',
      data: { summary: 'hiring', trending_titles: ['SRE'] },
    },
    webhook_id: 'wh_test',
    delivered_at: '2026-03-01T12:00:01Z',
  });
}

describe('bucket collector (Temporal)', () => {
  let tb: WorkflowTestbed<{ temporal: true; s3: true; gcs: false }>;
  let config: WebhookDeliveryConfig;
  const taskQueue = `collector-${Date.now()}`;
  const workers: Array<{ worker: Worker; done: Promise<void> }> = [];
  let openAny: (url: string) => Store;

  beforeAll(async () => {
    tb = await startWorkflowTestbed({ temporal: true, s3: true, gcs: false }, workflowsPath, 'collector');
    await s3ClientFor(tb.stack.s3).send(new CreateBucketCommand({ Bucket: 'lake' }));
    const fileUrl = (name: string) => pathToFileURL(join(tb.workDir, name)).href;
    const destinations: DestinationInput[] = [
      { id: 'by-count', kind: 'bucket', url: fileUrl('count'), prefix: 'events', max_events: 3, max_age_ms: 3_600_000 },
      { id: 'by-time', kind: 'bucket', url: fileUrl('time'), max_events: 1000, max_age_ms: 1_500 },
      { id: 'replay', kind: 'bucket', url: fileUrl('replay'), max_events: 2, max_age_ms: 1_000 },
      { id: 'can', kind: 'bucket', url: fileUrl('can'), max_events: 1, max_age_ms: 3_600_000 },
      { id: 's3', kind: 'bucket', url: 's3://lake/webhooks', max_events: 2, max_age_ms: 1_000 },
    ];
    config = webhookDeliveryConfig({ destinations, deadLetterUrl: fileUrl('state') });
    const env = tb.stack.env();
    openAny = (url) => openStore(url, { env });
    await startWorker();
  });

  afterAll(async () => {
    await stopWorkers();
    await tb?.stop();
  });

  async function startWorker(options: { maxCachedWorkflows?: number } = {}): Promise<void> {
    const deps = { config, openStore: openAny };
    const activities = { ...createWebhookDeliveryActivities(deps), ...createCollectorActivities(deps) };
    workers.push(await tb.startWorker({ taskQueue, activities, ...options }));
  }

  async function stopWorkers(): Promise<void> {
    for (const { worker, done } of workers.splice(0)) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    }
  }

  function storeOf(id: string): Store {
    return openAny(config.destinations.find((d) => d.id === id)!.url);
  }

  /** Delivers `count` fresh events to destination `id`, then waits until its manifest counts them all. */
  async function deliverAndAwaitEvents(id: string, count: number) {
    const store = storeOf(id);
    const events = Array.from({ length: count }, makeEvent);
    await deliverAll(id, events);
    await expect
      .poll(async () => (await manifest(store, `collector/${id}/_manifest.json`))?.events, { timeout: 20_000 })
      .toBe(count);
    return { store, events };
  }

  async function deliverAll(destinationId: string, events: SignalCreatedEvent[]): Promise<void> {
    const handles = await Promise.all(
      events.map((event) =>
        tb.client.workflow.start<typeof deliverSignalEvent>('deliverSignalEvent', {
          taskQueue,
          workflowId: `signal-${event.signal.id}-${destinationId}`,
          args: [{ event, destinations: [{ id: destinationId, kind: 'bucket' }] }],
        }),
      ),
    );
    for (const r of await Promise.all(handles.map((h) => h.result()))) {
      expect(r.destinations[0]!.outcome).toBe('collected');
    }
  }

  async function listKeys(store: Store, prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const o of store.list(prefix)) keys.push(o.key);
    return keys;
  }

  async function manifest(store: Store, key: string): Promise<CollectorManifest | undefined> {
    return (await store.exists(key)) ? (JSON.parse(await store.readText(key)) as CollectorManifest) : undefined;
  }

  async function status(destinationId: string): Promise<CollectorStatus> {
    return tb.client.workflow.getHandle(collectorWorkflowId(destinationId)).query<CollectorStatus>('collectorStatus');
  }

  async function partIds(store: Store, key: string): Promise<string[]> {
    const text = await store.readText(key);
    return text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as SignalCreatedEvent).signal.id);
  }

  it('rotates a part every N events, with deterministic names and a manifest', async () => {
    const store = storeOf('by-count');
    const events = Array.from({ length: 7 }, makeEvent);
    await deliverAll('by-count', events);
    await expect
      .poll(async () => (await manifest(store, 'events/collector/by-count/_manifest.json'))?.parts.length, {
        timeout: 20_000,
      })
      .toBe(2);
    // The manifest is written inside the part's activity; the workflow's buffer shrinks once that activity returns.
    await expect.poll(async () => (await status('by-count')).buffered, { timeout: 20_000 }).toBe(1);
    expect(await listKeys(store, 'events/collector/by-count/part-')).toEqual([
      'events/collector/by-count/part-00000.jsonl',
      'events/collector/by-count/part-00001.jsonl',
    ]);
    // The last event waits for its part; a flush writes it.
    await tb.client.workflow.getHandle(collectorWorkflowId('by-count')).signal('flushCollector');
    await expect
      .poll(async () => (await manifest(store, 'events/collector/by-count/_manifest.json'))?.events, {
        timeout: 20_000,
      })
      .toBe(7);
    const m = (await manifest(store, 'events/collector/by-count/_manifest.json'))!;
    expect(m.parts.map((p) => [p.seq, p.count])).toEqual([
      [0, 3],
      [1, 3],
      [2, 1],
    ]);
    const written = [
      ...(await partIds(store, m.parts[0]!.key)),
      ...(await partIds(store, m.parts[1]!.key)),
      ...(await partIds(store, m.parts[2]!.key)),
    ];
    expect(written.sort()).toEqual(events.map((e) => e.signal.id).sort());
    const part = (await readPart(store, m.parts[0]!.key, { owner: 'by-count', options: '', index: 0 })).part;
    expect(part?.counts.lines).toBe(3);
    expect(part?.sha256).toBe(m.parts[0]!.sha256);
    // The staging is cleared after the manifest is written: wait for it.
    await expect.poll(() => listKeys(store, 'events/collector/by-count/staging/'), { timeout: 20_000 }).toEqual([]);
  });

  it('rotates a part T after its first event when fewer than N arrive', async () => {
    const store = storeOf('by-time');
    const started = Date.now();
    await deliverAll('by-time', [makeEvent(), makeEvent()]);
    await expect
      .poll(async () => (await manifest(store, 'collector/by-time/_manifest.json'))?.parts.length, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    await deliverAll('by-time', [makeEvent()]);
    await expect
      .poll(async () => (await manifest(store, 'collector/by-time/_manifest.json'))?.parts.length, {
        timeout: 20_000,
      })
      .toBe(2);
    const m = (await manifest(store, 'collector/by-time/_manifest.json'))!;
    expect(m.parts.map((p) => p.count)).toEqual([2, 1]);
    expect(m.parts.map((p) => p.key)).toEqual([
      'collector/by-time/part-00000.jsonl',
      'collector/by-time/part-00001.jsonl',
    ]);
  });

  it('re-sent input, a retried part write and a full history replay never create a second copy of a part', async () => {
    const { store, events } = await deliverAndAwaitEvents('replay', 4);
    const before = await listKeys(store, 'collector/replay/');
    const contents = await Promise.all(before.map((k) => store.readText(k)));
    expect(before.filter((k) => k.includes('part-'))).toEqual([
      'collector/replay/part-00000.jsonl',
      'collector/replay/part-00001.jsonl',
    ]);

    // 1. The same input again, through new delivery workflows and as raw signals to the collector.
    const again = events.map((e) => ({ ...e }));
    await Promise.all(
      again.map((event) =>
        tb.client.workflow
          .start<typeof deliverSignalEvent>('deliverSignalEvent', {
            taskQueue,
            workflowId: `signal-${event.signal.id}-replay-again`,
            args: [{ event, destinations: [{ id: 'replay', kind: 'bucket' }] }],
          })
          .then((h) => h.result()),
      ),
    );
    const handle = tb.client.workflow.getHandle(collectorWorkflowId('replay'));
    for (const e of events) await handle.signal('collectEvent', { signalId: e.signal.id });
    await handle.signal('flushCollector');
    // Wait on the collector having taken every re-sent signal, not on a sleep.
    await expect.poll(async () => (await status('replay')).duplicatesIgnored, { timeout: 20_000 }).toBe(8);
    expect((await status('replay')).seq).toBe(2);
    expect((await status('replay')).buffered).toBe(0);

    // 2. A retried write of an existing part (an activity that ran but whose completion was lost).
    const activities = createCollectorActivities({ config, openStore: openAny });
    const retried = await activities.writeCollectorPart({
      destinationId: 'replay',
      seq: 0,
      signalIds: events.slice(0, 2).map((e) => e.signal.id),
    });
    expect(retried.key).toBe('collector/replay/part-00000.jsonl');

    // 3. A fresh worker without a workflow cache replays the collector's whole history on every task.
    await stopWorkers();
    await startWorker({ maxCachedWorkflows: 0 });
    expect((await status('replay')).seq).toBe(2);
    // Nothing buffered to flush: the replayed collector writes no part (its status is read after the flush signal,
    // so the flush has been handled).
    await handle.signal('flushCollector');
    expect(await status('replay')).toMatchObject({ seq: 2, buffered: 0 });

    const after = await listKeys(store, 'collector/replay/');
    const part = (k: string) => k.includes('part-');
    expect(after.filter(part)).toEqual(before.filter(part));
    for (const [i, k] of before.entries()) {
      if (part(k)) expect(await store.readText(k)).toBe(contents[i]);
    }
    const m = (await manifest(store, 'collector/replay/_manifest.json'))!;
    expect(m.parts.map((p) => p.seq)).toEqual([0, 1]);
    expect(m.events).toBe(4);

    // New events still go on from seq 2 after the replay.
    await deliverAll('replay', [makeEvent()]);
    await expect
      .poll(async () => (await manifest(store, 'collector/replay/_manifest.json'))?.parts.length, {
        timeout: 20_000,
      })
      .toBe(3);
    expect(await store.exists('collector/replay/part-00002.jsonl')).toBe(true);
  });

  it('continues as new after partsPerRun parts and keeps its sequence', async () => {
    const store = storeOf('can');
    const first = await tb.client.workflow.start<typeof bucketCollector>('bucketCollector', {
      taskQueue,
      workflowId: collectorWorkflowId('can'),
      args: [{ destinationId: 'can', maxEvents: 1, maxAgeMs: 3_600_000, partsPerRun: 2 }],
    });
    const events = Array.from({ length: 5 }, makeEvent);
    for (const e of events) await deliverAll('can', [e]);
    await expect
      .poll(async () => (await manifest(store, 'collector/can/_manifest.json'))?.parts.length, {
        timeout: 20_000,
      })
      .toBe(5);
    const desc = await tb.client.workflow.getHandle(collectorWorkflowId('can')).describe();
    expect(desc.runId).not.toBe(first.firstExecutionRunId);
    // The workflow counts the part once the activity that wrote the manifest has returned.
    await expect.poll(async () => (await status('can')).seq, { timeout: 20_000 }).toBe(5);
    const keys = (await listKeys(store, 'collector/can/part-')).map((k) => k.split('/').at(-1));
    expect(keys).toEqual([
      'part-00000.jsonl',
      'part-00001.jsonl',
      'part-00002.jsonl',
      'part-00003.jsonl',
      'part-00004.jsonl',
    ]);
    const ids = [];
    for (const k of await listKeys(store, 'collector/can/part-')) ids.push(...(await partIds(store, k)));
    expect(ids).toEqual(events.map((e) => e.signal.id));
  });

  it('writes parts and the manifest to S3', async () => {
    const { store } = await deliverAndAwaitEvents('s3', 3);
    const m = (await manifest(store, 'collector/s3/_manifest.json'))!;
    expect(m.parts.map((p) => p.count)).toEqual([2, 1]);
    await expect.poll(() => listKeys(store, 'collector/s3/staging/'), { timeout: 20_000 }).toEqual([]);
    expect(store.urlOf(m.parts[0]!.key)).toBe('s3://lake/webhooks/collector/s3/part-00000.jsonl');
  });
});
