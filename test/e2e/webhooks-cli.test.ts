/**
 * `signal-kit webhooks …` end to end, as a user runs it: the CLI in child processes (`node cli/main.ts`) against the
 * sandbox (subscriptions) and a real Temporal dev server (intake), with a worker that registers the webhook
 * workflows and delivers to a local HTTP destination. Everything listens on 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveryConfig } from '../../config/webhook-destinations.ts';
import { generateWebhookSecret, signWebhook } from '../../index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { signalCreatedEvent } from '../../testkit/signal-event.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { startWorker } from '../../workers/worker.ts';
import { type CliResult, cliMain, repoRoot as repo, runCli } from '../helpers/cli.ts';
import { decodeHistory } from '../helpers/history-text.ts';

let env: JobEnv;
let worker: WorkerHandle | undefined;
let destination: Server;
let destinationUrl: string;
const destinationSecret = generateWebhookSecret();
const received: Array<{ webhookId: string; signalId: string; verified: boolean }> = [];
let deadLetterDir: string;
const children: ChildProcess[] = [];

function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  // No inherited webhook settings: each command gets exactly what the test gives it.
  const base = env.childEnv();
  for (const name of Object.keys(base)) if (name.startsWith('SIGNAL_KIT_WEBHOOK_')) delete base[name];
  return { ...base, ...extra };
}

function cli(args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { cwd: repo, env: cliEnv(extra), timeout: 30_000 }, 'throw');
}

function json<T = Record<string, unknown>>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** Starts `webhooks serve` and resolves with its first stdout line (the listening address) once it is up. */
async function serve(args: string[], extra: Record<string, string>) {
  const child = spawn(process.execPath, [cliMain, 'webhooks', 'serve', ...args], {
    cwd: repo,
    env: cliEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then((code) => {
      throw new Error(`webhooks serve exited ${code} before listening: ${stderr}`);
    }),
  ]);
  const info = JSON.parse(first) as { listening: boolean; webhookUrl: string; port: number; taskQueue: string };
  return { child, info, exited, stderr: () => stderr };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The histories of every `webhooks` management call so far (visibility catches up within moments). */
async function managementHistories() {
  const ids = await until('the management workflows in visibility', async () => {
    const found: string[] = [];
    for await (const w of env.client.workflow.list({ query: "WorkflowType = 'manageWebhooks'" }))
      found.push(w.workflowId);
    return found.length >= 5 ? found : undefined;
  });
  return Promise.all(ids.map((id) => env.client.workflow.getHandle(id).fetchHistory()));
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  env = await startJobEnv();
  destination = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(destinationSecret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      const signalId = (JSON.parse(body) as { signal: { id: string } }).signal.id;
      received.push({ webhookId: String(req.headers['webhook-id']), signalId, verified });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/hooks`;
  deadLetterDir = await mkdtemp(join(tmpdir(), 'signal-kit-webhooks-cli-'));
  // The worker as deployed: the main queue registers deliverSignalEvent and its activities; the destination and
  // its secret are worker configuration only.
  worker = await startWorker({
    config: env.config(),
    workflowBundle: env.bundle,
    webhooks: webhookDeliveryConfig({
      destinations: [{ id: 'crm', kind: 'http', url: destinationUrl, secret: destinationSecret }],
      deadLetterUrl: pathToFileURL(deadLetterDir).href,
      allowlist: ['127.0.0.1/32'],
    }),
  });
});

afterAll(async () => {
  await Promise.allSettled(children.map(stopChild));
  await worker?.shutdown();
  await new Promise<void>((resolve) => (destination ? destination.close(() => resolve()) : resolve()));
  await env?.stop();
  if (deadLetterDir) await rm(deadLetterDir, { recursive: true, force: true });
});

describe('signal-kit webhooks', () => {
  let subscription: { webhook_id: string; secret: string; url: string; signal_types: string[]; status: string };

  it('subscribes, lists and updates subscriptions at the service', async () => {
    // No receiver yet (port 9 is discard, nothing listens there); the serve test points the subscription at its own.
    const url = 'http://127.0.0.1:9/webhooks';
    subscription = json(
      await cli(['webhooks', 'subscribe', '--url', url, '--types', 'news,hiring-trends', '--description', 'e2e']),
    );
    expect(subscription.webhook_id).toMatch(/^wh_/);
    expect(subscription.secret).toMatch(/^whsec_/);
    expect(subscription).toMatchObject({ url, signal_types: ['news', 'hiring-trends'], status: 'active' });

    const listed = json<{ webhooks: Array<Record<string, unknown>> }>(await cli(['webhooks', 'list']));
    const mine = listed.webhooks.find((w) => w['webhook_id'] === subscription.webhook_id);
    expect(mine).toMatchObject({ url, status: 'active' });
    expect(mine).not.toHaveProperty('secret');

    const paused = json(await cli(['webhooks', 'update', subscription.webhook_id, '--status', 'paused']));
    expect(paused).toMatchObject({ webhook_id: subscription.webhook_id, status: 'paused' });
    const active = json(
      await cli(['webhooks', 'update', subscription.webhook_id, '--status', 'active', '--types', 'news']),
    );
    expect(active).toMatchObject({ status: 'active', signal_types: ['news'] });
  });

  it('names the flag of a mistake, before or after asking the service', async () => {
    const missing = await cli(['webhooks', 'subscribe', '--types', 'news']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--url is required/);

    const badStatus = await cli(['webhooks', 'update', 'wh_x', '--status', 'off']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/--status must be active or paused/);

    // The service refuses an unknown signal type (422, field signal_types): the CLI names --types.
    const unknownType = await cli(['webhooks', 'subscribe', '--url', 'http://127.0.0.1:9/x', '--types', 'nope']);
    expect(unknownType.code).toBe(2);
    expect(unknownType.stderr).toMatch(/--types: .*422.*unknown signal type/);
    expect(unknownType.stdout).toBe('');

    const unknownId = await cli(['webhooks', 'test', 'wh_doesnotexist']);
    expect(unknownId.code).toBe(1);
    expect(unknownId.stderr).toMatch(/404.*not_found/);
  });

  it('makes every call through a worker on the rate-limited API queue, never with a key of its own', async () => {
    // The CLI itself cannot reach the service here: the worker makes the call, with its own key.
    const mark = env.sandbox.truth.lastCall();
    const listed = await cli(['webhooks', 'list'], { SIGNAL_API_URL: 'http://127.0.0.1:9', SIGNAL_API_KEY: '' });
    expect(listed.code, listed.stderr).toBe(0);
    expect(env.sandbox.truth.calls({ after: mark }).map((c) => `${c.method} ${c.path}`)).toEqual(['GET /v1/webhooks']);
    const histories = await managementHistories();
    expect(histories.length).toBeGreaterThan(0);
    for (const history of histories) {
      const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
      expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name)).toEqual([
        env.config().apiTaskQueue,
      ]);
      // A new subscription's signing secret never enters history in the clear (every payload decoded to look).
      const decoded = await decodeHistory(history);
      expect(decoded.undecoded).toBe(0);
      expect(decoded.payloads).toBeGreaterThan(0);
      expect(decoded.text).not.toContain(subscription.secret);
    }

    // No worker on the API queue: the command says what to start instead of waiting, and nothing is sent.
    const before = env.sandbox.truth.lastCall();
    const none = await cli(['webhooks', 'list'], { SIGNAL_KIT_API_TASK_QUEUE: 'nobody-polls-this' });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no worker polls task queue "nobody-polls-this".*signal-kit worker/);
    expect(env.sandbox.truth.lastCall()).toBe(before);
  });

  it('refuses to serve without its authentication settings, naming them', async () => {
    const noSecrets = await cli(['webhooks', 'serve', '--port', '0']);
    expect(noSecrets.code).toBe(2);
    expect(noSecrets.stderr).toMatch(/SIGNAL_KIT_WEBHOOK_SECRETS/);

    const badSecret = await cli(['webhooks', 'serve', '--port', '0'], { SIGNAL_KIT_WEBHOOK_SECRETS: 'not-a-secret' });
    expect(badSecret.code).toBe(2);
    expect(badSecret.stderr).toMatch(/SIGNAL_KIT_WEBHOOK_SECRETS must be whsec_/);
    expect(badSecret.stderr).not.toContain('not-a-secret');

    const shortToken = await cli(['webhooks', 'serve', '--port', '0', '--auth', 'token'], {
      SIGNAL_KIT_WEBHOOK_TOKEN: 'short',
    });
    expect(shortToken.code).toBe(2);
    expect(shortToken.stderr).toMatch(/SIGNAL_KIT_WEBHOOK_TOKEN must be at least 16 characters/);

    const open = await cli(['webhooks', 'serve', '--port', '0', '--auth', 'none']);
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/--allow-unauthenticated/);
  });

  it('serves: a signed event is accepted once, a redelivery is a duplicate, a bad signature is refused', async () => {
    const ownSecret = generateWebhookSecret();
    // Port 0: the receiver binds a free port itself (no port reserved earlier and bound later).
    const served = await serve(['--port', '0'], {
      // The subscription's secret (deliveries from the service) and a second one, as during a rotation.
      SIGNAL_KIT_WEBHOOK_SECRETS: `${subscription.secret},${ownSecret}`,
    });
    expect(served.info).toMatchObject({ listening: true, taskQueue: env.config().taskQueue });
    json(await cli(['webhooks', 'update', subscription.webhook_id, '--url', served.info.webhookUrl]));

    const signalId = randomUUID();
    const body = JSON.stringify(signalCreatedEvent(signalId));
    const headers = signWebhook({ id: `msg_${signalId.slice(0, 8)}`, timestamp: new Date(), body, secret: ownSecret });
    const first = await post(served.info.webhookUrl, body, headers);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ accepted: true, duplicate: false, workflow_id: `signal-${signalId}` });

    const again = await post(served.info.webhookUrl, body, headers);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ accepted: true, duplicate: true, workflow_id: `signal-${signalId}` });

    const forged = signWebhook({ id: 'msg_forged', timestamp: new Date(), body, secret: generateWebhookSecret() });
    const refused = await post(served.info.webhookUrl, body, forged);
    expect(refused.status).toBe(401);
    const tampered = await post(served.info.webhookUrl, body.replace('Acme', 'Evil'), headers);
    expect(tampered.status).toBe(401);

    // The worker delivered the accepted event once to its configured destination, signed with that secret.
    const handle = env.client.workflow.getHandle(`signal-${signalId}`);
    await handle.result();
    const hits = received.filter((hit) => hit.signalId === signalId);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.verified).toBe(true);

    // The service's test event reaches the served receiver, signed with the subscription's secret, and is accepted.
    const tested = json<{ delivered: boolean; status_code: number }>(
      await cli(['webhooks', 'test', subscription.webhook_id]),
    );
    expect(tested).toMatchObject({ delivered: true, status_code: 202 });
    const hit = await until('the test event at the destination', () =>
      received.find((h) => h.signalId !== signalId && h.verified),
    );
    expect(hit.webhookId).toMatch(/\S/);

    expect(served.stderr()).toContain('"status":202');
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });

  it('reports a test event nobody received', async () => {
    // The served receiver is gone: the service cannot deliver, the CLI prints the result and exits 1.
    const tested = await cli(['webhooks', 'test', subscription.webhook_id]);
    expect(tested.code).toBe(1);
    expect(JSON.parse(tested.stdout)).toMatchObject({ delivered: false });
    expect(tested.stderr).toMatch(/the test event was not delivered/);
  });

  it('deletes a subscription', async () => {
    const deleted = json(await cli(['webhooks', 'delete', subscription.webhook_id]));
    expect(deleted).toMatchObject({ webhook_id: subscription.webhook_id, deleted: true });
    const listed = json<{ webhooks: Array<Record<string, unknown>> }>(await cli(['webhooks', 'list']));
    expect(listed.webhooks.some((w) => w['webhook_id'] === subscription.webhook_id)).toBe(false);
    const again = await cli(['webhooks', 'delete', subscription.webhook_id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not_found/);
  });
});
