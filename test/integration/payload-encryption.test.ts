import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { dataConverterFor } from '../../workers/payload-codec.ts';
import { startWorker } from '../../workers/worker.ts';
import { decodeHistory } from '../helpers/history-text.ts';

describe('payload encryption on the real dev server', () => {
  let env: JobEnv;
  const keys = [{ id: 'test', key: randomBytes(32) }];

  beforeAll(async () => {
    env = await startJobEnv();
    await env.startWorker({ payloadKeys: keys });
  });
  afterAll(async () => {
    await env?.stop();
  });

  /** A client of the test server that seals and opens payloads with the keys. */
  const keyedClient = () =>
    new Client({
      connection: env.client.connection,
      namespace: env.config().namespace,
      dataConverter: dataConverterFor(keys)!,
    });

  it('keeps workflow arguments and results sealed in history, readable through a client with the key', async () => {
    const c = env.config();
    const client = keyedClient();
    const result = await client.workflow.execute('smokeWorkflow', {
      workflowId: 'sealed-smoke',
      taskQueue: c.taskQueue,
      args: ['jane.doe@acme.com'],
    });
    expect(result).toMatch(/^Hello, jane\.doe@acme\.com!/);

    // The history as the server stores it, read through a client without the key: every payload is sealed.
    const history = await env.client.workflow.getHandle('sealed-smoke').fetchHistory();
    const payloads = collectPayloads(history.events);
    expect(payloads.length).toBeGreaterThanOrEqual(2); // the argument and the result, at least
    for (const payload of payloads) {
      expect(bytes(payload.metadata?.['encoding']).toString()).toBe('binary/encrypted');
      expect(bytes(payload.data).toString('latin1')).not.toContain('jane.doe');
    }
    // Decoded without the key nothing opens; with it, every payload does and the address is there to be found.
    const sealed = await decodeHistory(history);
    expect(sealed.undecoded).toBe(sealed.payloads);
    expect(sealed.text).not.toContain('jane.doe');
    const opened = await decodeHistory(history, dataConverterFor(keys)!.payloadCodecs);
    expect(opened).toMatchObject({ payloads: payloads.length, undecoded: 0 });
    expect(opened.text).toContain('jane.doe@acme.com');
  });

  it('a secret planted in a workflow input is found once the history is decoded with the key, and only then', async () => {
    const c = env.config();
    const client = keyedClient();
    const planted = 'sk_planted_51c0e9a7d2f4';
    await client.workflow.execute('smokeWorkflow', {
      workflowId: 'sealed-planted',
      taskQueue: c.taskQueue,
      args: [planted],
    });
    const history = await env.client.workflow.getHandle('sealed-planted').fetchHistory();
    expect(JSON.stringify(history)).not.toContain(planted);
    expect((await decodeHistory(history)).text).not.toContain(planted);
    expect((await decodeHistory(history, dataConverterFor(keys)!.payloadCodecs)).text).toContain(planted);
  });

  it('keeps failure messages sealed too: a job failing on an input named after a person leaves no trace of it', async () => {
    // The production path: the worker bundles its workflows itself, with the failure converter of the keys.
    const c = env.config({ payloadKeys: keys });
    const worker = await startWorker({
      config: { ...c, taskQueue: `${c.taskQueue}-prod`, apiTaskQueue: `${c.apiTaskQueue}-prod` },
    });
    try {
      const client = keyedClient();
      const missing = join(tmpdir(), `no-such-dir-${randomBytes(4).toString('hex')}`, 'jane.doe@acme.com.csv');
      const failed = await client.workflow
        .execute('verifyEmails', {
          workflowId: 'sealed-failure',
          taskQueue: `${c.taskQueue}-prod`,
          args: [
            {
              jobId: 'sealed-failure',
              input: missing,
              output: tmpdir(),
              taskQueue: `${c.taskQueue}-prod`,
              apiTaskQueue: `${c.apiTaskQueue}-prod`,
            },
          ],
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(failed).toBeInstanceOf(WorkflowFailedError);
      // Read with the key, the reason is there...
      const reasons: string[] = [];
      for (let e: unknown = failed; e instanceof Error; e = e.cause) reasons.push(e.message);
      expect(reasons.join(' / ')).toContain('jane.doe@acme.com');
      // ...but the history as stored holds neither the message nor a stack trace in the clear.
      const history = await env.client.workflow.getHandle('sealed-failure').fetchHistory();
      const stored = JSON.stringify(history, (_k, v) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
      );
      expect(stored).toContain('Encoded failure');
      expect(stored).not.toContain('jane.doe');
    } finally {
      await worker.shutdown();
    }
  });
});

type RawPayload = { metadata?: Record<string, unknown>; data?: unknown };

/** Bytes as the history API returns them: a Uint8Array, or base64 text once converted to JSON. */
function bytes(value: unknown): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.from((value as Uint8Array) ?? []);
}

function collectPayloads(node: unknown, found: RawPayload[] = []): RawPayload[] {
  if (Array.isArray(node)) for (const item of node) collectPayloads(item, found);
  else if (node && typeof node === 'object') {
    for (const [name, value] of Object.entries(node)) {
      if (name === 'payloads' && Array.isArray(value)) found.push(...(value as RawPayload[]));
      else collectPayloads(value, found);
    }
  }
  return found;
}
