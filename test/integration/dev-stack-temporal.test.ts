import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevStackWith } from '../../devstack/index.ts';
import { createSmokeActivities } from '../../testkit/smoke-activities.ts';
import type { smokeWorkflow } from '../../testkit/smoke-workflow.ts';
import { startStackAndBundle } from '../helpers/temporal-stack.ts';

const workflowsPath = fileURLToPath(new URL('../../testkit/smoke-workflow.ts', import.meta.url));

describe('dev stack: Temporal', () => {
  let stack: DevStackWith<{ temporal: true; s3: false; gcs: false }>;
  let bundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    [stack, bundle] = await startStackAndBundle({ temporal: true, s3: false, gcs: false }, workflowsPath, 'WARN');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function runSmoke(taskQueue: string, name: string): Promise<string> {
    const workerConnection = await NativeConnection.connect({ address: stack.temporal.address });
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const worker = await Worker.create({
        connection: workerConnection,
        namespace: stack.temporal.namespace,
        taskQueue,
        workflowBundle: bundle,
        activities: createSmokeActivities(),
      });
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      return await worker.runUntil(
        client.workflow.execute<typeof smokeWorkflow>('smokeWorkflow', {
          taskQueue,
          workflowId: `smoke-${taskQueue}`,
          args: [name],
        }),
      );
    } finally {
      await connection.close();
      await workerConnection.close();
    }
  }

  it('a real worker runs a workflow that calls an activity, and the result comes back through the client', async () => {
    const result = await runSmoke(`smoke-${Date.now()}`, 'signal-kit');
    expect(result).toMatch(/^Hello, signal-kit! \(from pid \d+\)$/);
  });

  it('restarts on the same address keeping its SQLite state', async () => {
    const taskQueue = `smoke-restart-${Date.now()}`;
    await runSmoke(taskQueue, 'before');
    await stack.temporal.restart();
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection, namespace: stack.temporal.namespace });
      const described = await client.workflow.getHandle(`smoke-${taskQueue}`).describe();
      expect(described.status.name).toBe('COMPLETED');
    } finally {
      await connection.close();
    }
  });
});
