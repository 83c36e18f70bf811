import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataConverterFor } from '../../workers/payload-codec.ts';
import { type JobEnv, startJobEnv } from '../helpers/job-env.ts';

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

  it('keeps workflow arguments and results sealed in history, readable through a client with the key', async () => {
    const c = env.config();
    const client = new Client({
      connection: env.client.connection,
      namespace: c.namespace,
      dataConverter: dataConverterFor(keys)!,
    });
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
