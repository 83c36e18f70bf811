/**
 * Webhook delivery on a real Temporal dev server: intake → deliverSignalEvent → HTTP destinations (through the
 * SSRF-safe dispatcher, 127.0.0.1 allowlisted) with retries, 410, Retry-After, dead letters, and a worker killed
 * mid-delivery. Every outbound socket is checked: a connect to anything but 127.0.0.1 fails the suite.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCollectorActivities } from '../../activities/collector.ts';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.ts';
import { openStore } from '../../config/storage.ts';
import { type DestinationInput, webhookDeliveryConfig } from '../../config/webhook-destinations.ts';
import type { DestinationRef } from '../../connectors/webhooks/destinations.ts';
import type { SignalCreatedEvent } from '../../connectors/webhooks/events.ts';
import type { Resolver } from '../../connectors/webhooks/safe-dispatcher.ts';
import { generateWebhookSecret, signWebhook } from '../../connectors/webhooks/signature.ts';
import { startWebhookReceiver, temporalEnqueue, type WebhookReceiver } from '../../intake/index.ts';
import type { DeliverSignalEventInput, deliverSignalEvent } from '../../workflows/webhook-delivery.ts';
import { acmeSignalEvent } from '../helpers/signal-event.ts';
import { startWorkflowTestbed, type WorkflowTestbed } from '../helpers/temporal-stack.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const workflowsPath = fileURLToPath(new URL('../../testkit/webhook-workflows.ts', import.meta.url));

// ---- guard: no packet to anything but 127.0.0.1 ------------------------------------------------------------------

const violations: string[] = [];
const realConnect = net.Socket.prototype.connect;
function targetOf(args: unknown[]): string {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (typeof first === 'object' && first !== null) {
    const o = first as { host?: string; path?: string; lookup?: unknown };
    if (o.path) return `unix:${o.path}`;
    if (o.lookup) return `lookup:${o.host}`;
    return o.host ?? 'localhost';
  }
  if (typeof first === 'number') return typeof args[1] === 'string' ? args[1] : 'localhost';
  return String(first);
}

// ---- a destination endpoint that records every delivery ----------------------------------------------------------

interface Hit {
  path: string;
  webhookId: string;
  signalId: string;
  verified: boolean;
  at: number;
  status?: number;
}

type Reply = { status: number; headers?: Record<string, string>; hold?: boolean };
type Behaviour = (hit: Hit, nthForSignal: number) => Reply;

class Endpoint {
  server!: Server;
  port = 0;
  hits: Hit[] = [];
  behaviours = new Map<string, Behaviour>();
  held: ServerResponse[] = [];
  readonly secrets: Record<string, string>;
  constructor(secrets: Record<string, string>) {
    this.secrets = secrets;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    let verified = false;
    const secret = this.secrets[path];
    try {
      if (secret) {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      }
    } catch {
      verified = false;
    }
    let signalId = '';
    try {
      signalId = (JSON.parse(body) as { signal: { id: string } }).signal.id;
    } catch {
      // not an event
    }
    const hit: Hit = { path, webhookId: String(req.headers['webhook-id']), signalId, verified, at: Date.now() };
    const n = this.hits.filter((h) => h.path === path && h.signalId === signalId).length + 1;
    this.hits.push(hit);
    const behaviour: Behaviour = this.behaviours.get(path) ?? (() => ({ status: 200 }));
    const reply = behaviour(hit, n);
    if (reply.hold) {
      this.held.push(res);
      return;
    }
    hit.status = reply.status;
    res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(`status ${reply.status}`);
  }

  forPath(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ---- the suite ---------------------------------------------------------------------------------------------------

const FAST = { delaysMs: [0, 200, 200, 200], jitterRatio: 0 };

function makeEvent(type = 'news'): SignalCreatedEvent {
  return acmeSignalEvent({ type, title: 'Acme does something', data: { summary: 'something happened' } });
}

describe('webhook delivery (Temporal)', () => {
  let tb: WorkflowTestbed<{ temporal: true; s3: false; gcs: false }>;
  let endpoint: Endpoint;
  let worker: Worker | undefined;
  let workerDone: Promise<void> | undefined;
  const taskQueue = `webhooks-${Date.now()}`;
  const secrets = {
    '/a': generateWebhookSecret(),
    '/b': generateWebhookSecret(),
    '/flaky': generateWebhookSecret(),
    '/gone': generateWebhookSecret(),
    '/down': generateWebhookSecret(),
    '/throttled': generateWebhookSecret(),
    '/redirect': generateWebhookSecret(),
    '/slow': generateWebhookSecret(),
  };
  let destinations: DestinationInput[];
  let deadLetterUrl: string;

  const resolver: Resolver = async (host) => {
    if (host === 'crm.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'internal.test') return [{ address: '10.0.0.5', family: 4 }];
    throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };

  beforeAll(async () => {
    vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const target = targetOf(args);
      if (target !== '127.0.0.1') {
        violations.push(target);
        throw new Error(`test guard: refused a connect to ${target}`);
      }
      return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    });
    tb = await startWorkflowTestbed({ temporal: true, s3: false, gcs: false }, workflowsPath, 'webhooks');
    deadLetterUrl = pathToFileURL(join(tb.workDir, 'state')).href;
    endpoint = new Endpoint(secrets);
    await endpoint.start();
    destinations = [
      { id: 'crm', kind: 'http', url: endpoint.url('/a', 'crm.test'), secret: secrets['/a'] },
      { id: 'ops', kind: 'http', url: endpoint.url('/b'), secret: secrets['/b'], signal_types: ['news'] },
      { id: 'hiring', kind: 'http', url: endpoint.url('/b'), secret: secrets['/b'], signal_types: ['hiring-trends'] },
      { id: 'flaky', kind: 'http', url: endpoint.url('/flaky'), secret: secrets['/flaky'] },
      { id: 'gone', kind: 'http', url: endpoint.url('/gone'), secret: secrets['/gone'] },
      { id: 'down', kind: 'http', url: endpoint.url('/down'), secret: secrets['/down'] },
      { id: 'throttled', kind: 'http', url: endpoint.url('/throttled'), secret: secrets['/throttled'] },
      { id: 'redirect', kind: 'http', url: endpoint.url('/redirect'), secret: secrets['/redirect'] },
      { id: 'internal', kind: 'http', url: 'http://internal.test/hook', secret: secrets['/a'] },
      { id: 'slow', kind: 'http', url: endpoint.url('/slow'), secret: secrets['/slow'], timeout_ms: 60_000 },
      {
        id: 'lake',
        kind: 'bucket',
        url: pathToFileURL(join(tb.workDir, 'lake')).href,
        max_events: 100,
        max_age_ms: 300,
      },
    ];
    await startInProcessWorker();
  });

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await workerDone;
    await endpoint?.stop();
    await tb?.stop();
    vi.restoreAllMocks();
    expect(violations, 'a connect to a non-loopback address was attempted').toEqual([]);
  });

  function config() {
    return webhookDeliveryConfig({ destinations, deadLetterUrl, allowlist: ['127.0.0.1/32'] });
  }

  async function startInProcessWorker(): Promise<void> {
    const deps = { config: config(), openStore, resolver };
    const activities = { ...createWebhookDeliveryActivities(deps), ...createCollectorActivities(deps) };
    ({ worker, done: workerDone } = await tb.startWorker({ taskQueue, activities }));
  }

  function refs(...ids: string[]): DestinationRef[] {
    return ids.map((id) => {
      const d = destinations.find((x) => x.id === id)!;
      return { id: d.id, kind: d.kind, ...(d.signal_types ? { signalTypes: d.signal_types } : {}) };
    });
  }

  async function deliver(
    event: SignalCreatedEvent,
    input: Omit<DeliverSignalEventInput, 'event'>,
    queue = taskQueue,
  ): Promise<WorkflowHandle<typeof deliverSignalEvent>> {
    return tb.client.workflow.start<typeof deliverSignalEvent>('deliverSignalEvent', {
      taskQueue: queue,
      workflowId: `signal-${event.signal.id}`,
      args: [{ schedule: FAST, ...input, event }],
    });
  }

  it('the same event posted three times to the intake is delivered once per destination', async () => {
    const intakeSecret = generateWebhookSecret();
    let receiver: WebhookReceiver | undefined;
    try {
      receiver = await startWebhookReceiver({
        auth: { kind: 'standard-webhooks', secrets: [intakeSecret] },
        enqueue: temporalEnqueue({
          client: tb.client,
          taskQueue,
          input: { schedule: FAST, destinations: refs('crm', 'ops', 'hiring', 'lake') },
        }),
      });
      const event = makeEvent('news');
      const body = JSON.stringify(event);
      const statuses: number[] = [];
      const answers: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const headers = signWebhook({ id: 'msg_from_service', timestamp: new Date(), body, secret: intakeSecret });
        const res = await request(receiver.webhookUrl, {
          method: 'POST',
          body,
          headers: { ...headers, 'content-type': 'application/json' },
        });
        statuses.push(res.statusCode);
        answers.push(await res.body.json());
      }
      expect(statuses).toEqual([202, 200, 200]);
      expect(answers[1]).toMatchObject({ accepted: true, duplicate: true });

      const result = await tb.client.workflow
        .getHandle<typeof deliverSignalEvent>(`signal-${event.signal.id}`)
        .result();
      const byId = Object.fromEntries(result.destinations.map((d) => [d.id, d]));
      expect(byId['crm']?.outcome).toBe('delivered');
      expect(byId['ops']?.outcome).toBe('delivered');
      expect(byId['hiring']?.outcome).toBe('filtered');
      expect(byId['lake']?.outcome).toBe('collected');

      const mine = endpoint.hits.filter((h) => h.signalId === event.signal.id);
      expect(mine.map((h) => h.path).sort()).toEqual(['/a', '/b']);
      expect(mine.every((h) => h.verified)).toBe(true);
      expect(mine.find((h) => h.path === '/a')?.webhookId).toBe(`msg_${event.signal.id}_crm`);

      // The bucket destination's collector writes it into a part within max_age_ms.
      const lake = openStore(pathToFileURL(join(tb.workDir, 'lake')).href);
      await expect
        .poll(
          async () => {
            const m = JSON.parse(await lake.readText('collector/lake/_manifest.json').catch(() => '{"events":0}'));
            return m.events as number;
          },
          { timeout: 15_000 },
        )
        .toBe(1);
      const part = await lake.readText('collector/lake/part-00000.jsonl');
      expect(JSON.parse(part.trim()).signal.id).toBe(event.signal.id);
    } finally {
      await receiver?.close();
    }
  });

  it('a destination that fails for a while and then recovers receives every event, one webhook-id each', async () => {
    const failuresPerEvent = 2;
    endpoint.behaviours.set('/flaky', (_hit, n) => ({ status: n <= failuresPerEvent ? 500 : 200 }));
    const events = [makeEvent(), makeEvent(), makeEvent()];
    const handles = await Promise.all(events.map((e) => deliver(e, { destinations: refs('flaky') })));
    const results = await Promise.all(handles.map((h) => h.result()));
    for (const [i, r] of results.entries()) {
      const d = r.destinations[0]!;
      expect(d.outcome).toBe('delivered');
      expect(d.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
      const hits = endpoint.forPath('/flaky').filter((h) => h.signalId === events[i]!.signal.id);
      expect(hits).toHaveLength(3);
      expect(new Set(hits.map((h) => h.webhookId))).toEqual(new Set([d.webhookId]));
      expect(hits.every((h) => h.verified)).toBe(true);
    }
  });

  it('a destination answering 410 is disabled: it receives nothing more', async () => {
    endpoint.behaviours.set('/gone', () => ({ status: 410 }));
    const first = await (await deliver(makeEvent(), { destinations: refs('gone') })).result();
    expect(first.destinations[0]).toMatchObject({ outcome: 'gone' });
    expect(first.destinations[0]!.attempts).toHaveLength(1);
    expect(first.destinations[0]!.attempts[0]).toMatchObject({ status: 410, errorType: 'DestinationGone' });
    const state = JSON.parse(await readFile(join(tb.workDir, 'state/destinations/gone/state.json'), 'utf8'));
    expect(state).toMatchObject({ disabled: true, status: 410 });

    const second = await (await deliver(makeEvent(), { destinations: refs('gone') })).result();
    expect(second.destinations[0]!.outcome).toBe('disabled');
    expect(endpoint.forPath('/gone')).toHaveLength(1);
  });

  it('a destination that never recovers ends in the dead-letter location with every attempt', async () => {
    endpoint.behaviours.set('/down', () => ({ status: 500 }));
    const event = makeEvent();
    const r = await (await deliver(event, { destinations: refs('down') })).result();
    const d = r.destinations[0]!;
    expect(d.outcome).toBe('dead_lettered');
    expect(d.attempts).toHaveLength(FAST.delaysMs.length);
    expect(d.deadLetterUrl).toBe(
      pathToFileURL(join(tb.workDir, 'state/dead-letter/down', `${event.signal.id}.json`)).href,
    );
    const dead = JSON.parse(await readFile(fileURLToPath(d.deadLetterUrl!), 'utf8'));
    expect(dead.event).toEqual(event);
    expect(dead.webhook_id).toBe(d.webhookId);
    expect(dead.attempts).toHaveLength(4);
    expect(dead.attempts.every((a: { status: number }) => a.status === 500)).toBe(true);
    expect(endpoint.forPath('/down').filter((h) => h.signalId === event.signal.id)).toHaveLength(4);
  });

  it('honours Retry-After on 429 and 503', async () => {
    endpoint.behaviours.set('/throttled', (_hit, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after': '2' } }
        : n === 2
          ? { status: 503, headers: { 'retry-after': '1' } }
          : { status: 200 },
    );
    const event = makeEvent();
    const r = await (await deliver(event, { destinations: refs('throttled') })).result();
    expect(r.destinations[0]!.outcome).toBe('delivered');
    expect(r.destinations[0]!.attempts.map((a) => a.retryAfterMs)).toEqual([2000, 1000, undefined]);
    const at = endpoint.forPath('/throttled').map((h) => h.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1900);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(900);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    endpoint.behaviours.set('/redirect', () => ({ status: 302, headers: { location: endpoint.url('/a') } }));
    const before = endpoint.forPath('/a').length;
    const event = makeEvent();
    const r = await (
      await deliver(event, { destinations: refs('redirect'), schedule: { delaysMs: [0, 100], jitterRatio: 0 } })
    ).result();
    expect(r.destinations[0]!.outcome).toBe('dead_lettered');
    expect(r.destinations[0]!.attempts.map((a) => a.status)).toEqual([302, 302]);
    expect(endpoint.forPath('/a').length).toBe(before);
  });

  it('reads the configured destinations within its first workflow task: one activity task per attempt, none more', async () => {
    // A worker configured with two destinations only, so that the event goes wherever its configuration says.
    const queue = `${taskQueue}-configured`;
    const deps = {
      config: webhookDeliveryConfig({
        destinations: destinations.filter((d) => d.id === 'crm' || d.id === 'hiring'),
        deadLetterUrl,
        allowlist: ['127.0.0.1/32'],
      }),
      openStore,
      resolver,
    };
    const own = await tb.startWorker({ taskQueue: queue, activities: createWebhookDeliveryActivities(deps) });
    try {
      const event = makeEvent('news');
      const handle = await deliver(event, {}, queue);
      const result = await handle.result();
      expect(result.destinations.map((d) => [d.id, d.outcome])).toEqual([
        ['crm', 'delivered'],
        ['hiring', 'filtered'],
      ]);
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(scheduled).toEqual(['deliverToEndpoint']);
      // The start's task lists the destinations and schedules the attempt; the attempt's result ends the workflow.
      expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(2);
    } finally {
      own.worker.shutdown();
      await own.done;
    }
  });

  it('refuses a destination resolving to a private address, without opening a socket, and dead-letters it', async () => {
    const event = makeEvent();
    const r = await (await deliver(event, { destinations: refs('internal') })).result();
    const d = r.destinations[0]!;
    expect(d.outcome).toBe('dead_lettered');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ errorType: 'DestinationBlocked' });
    expect(d.attempts[0]!.error).toContain('10.0.0.5');
    expect(violations).toEqual([]);
  });

  it('a worker killed mid-delivery: after restart every event is delivered, duplicates share the webhook-id', async () => {
    // The in-process worker must not take these tasks: use a queue only the child workers poll.
    const childQueue = `${taskQueue}-child`;
    const bundlePath = join(tb.workDir, 'workflow-bundle.js');
    await writeFile(bundlePath, tb.bundle.code);
    const childEnv = JSON.stringify({
      address: tb.stack.temporal.address,
      namespace: tb.stack.temporal.namespace,
      taskQueue: childQueue,
      bundlePath,
      destinations,
      deadLetterUrl,
    });
    const seen = new Set<string>();
    endpoint.behaviours.set('/slow', (hit) => {
      // The first request of each event hangs until its worker dies; later ones succeed.
      if (!seen.has(hit.signalId)) {
        seen.add(hit.signalId);
        return { status: 0, hold: true };
      }
      return { status: 200 };
    });

    const first = await startChildWorker(childEnv);
    const events = [makeEvent(), makeEvent(), makeEvent()];
    const handles = await Promise.all(
      events.map((e) => deliver(e, { destinations: refs('slow'), attemptHeartbeatTimeoutMs: 2_000 }, childQueue)),
    );
    await expect.poll(() => endpoint.forPath('/slow').length, { timeout: 30_000 }).toBe(3);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    const second = await startChildWorker(childEnv);
    try {
      const results = await Promise.all(handles.map((h) => h.result()));
      for (const [i, r] of results.entries()) {
        const d = r.destinations[0]!;
        expect(d.outcome).toBe('delivered');
        const hits = endpoint.forPath('/slow').filter((h) => h.signalId === events[i]!.signal.id);
        expect(hits.length).toBeGreaterThanOrEqual(2);
        expect(hits.filter((h) => h.status === 200)).toHaveLength(1);
        expect(new Set(hits.map((h) => h.webhookId))).toEqual(new Set([`msg_${events[i]!.signal.id}_slow`]));
        expect(d.attempts[0]!.errorType).toMatch(/Timeout/);
      }
    } finally {
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
      for (const res of endpoint.held.splice(0)) res.destroy();
    }
  }, 120_000);

  async function startChildWorker(env: string): Promise<ChildProcess> {
    const code = `
      import { NativeConnection, Worker, Runtime, DefaultLogger } from '@temporalio/worker';
      import { createWebhookDeliveryActivities } from ${JSON.stringify(join(repo, 'activities/webhook-delivery.ts'))};
      import { createCollectorActivities } from ${JSON.stringify(join(repo, 'activities/collector.ts'))};
      import { openStore } from ${JSON.stringify(join(repo, 'config/storage.ts'))};
      import { webhookDeliveryConfig } from ${JSON.stringify(join(repo, 'config/webhook-destinations.ts'))};
      Runtime.install({ logger: new DefaultLogger('WARN') });
      const env = JSON.parse(process.env.WEBHOOK_CHILD);
      const config = webhookDeliveryConfig({ destinations: env.destinations, deadLetterUrl: env.deadLetterUrl, allowlist: ['127.0.0.1/32'] });
      const connection = await NativeConnection.connect({ address: env.address });
      const deps = { config, openStore };
      const worker = await Worker.create({
        connection, namespace: env.namespace, taskQueue: env.taskQueue,
        workflowBundle: { codePath: env.bundlePath },
        activities: { ...createWebhookDeliveryActivities(deps), ...createCollectorActivities(deps) },
      });
      process.on('SIGTERM', () => worker.shutdown());
      console.log('READY');
      await worker.run();
      await connection.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: repo,
      env: { ...process.env, WEBHOOK_CHILD: env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('READY')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`child worker exited early (${code})`)));
    });
    return child;
  }
});
