import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { type DevStack, stackEnv } from '../devstack/index.ts';
import type { TemporalServer } from '../devstack/temporal.ts';

/**
 * The address of one Temporal dev server a whole test run shares (the test suite's global setup starts it). A job
 * environment that needs nothing special of its server gets a namespace of its own there instead of a server of its
 * own: a dev server costs seconds of CPU to start and a few percent of a core while it runs.
 */
export const SHARED_TEMPORAL_ENV = 'SIGNAL_KIT_DEVSTACK_SHARED_TEMPORAL';

export function sharedTemporalAddress(): string | undefined {
  return process.env[SHARED_TEMPORAL_ENV] || undefined;
}

class SharedServerError extends Error {
  constructor(action: string) {
    super(
      `cannot ${action} the Temporal dev server shared by the test run: a test that stops, restarts or inspects ` +
        'its server starts one of its own (startJobEnv({ ownTemporal: true }))',
    );
    this.name = 'SharedServerError';
  }
}

/** Running workflows are terminated and schedules deleted, so that nothing of the namespace keeps the server busy. */
async function quietNamespace(client: Client): Promise<void> {
  for await (const schedule of client.schedule.list()) await client.schedule.getHandle(schedule.scheduleId).delete();
  for await (const run of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
    await client.workflow
      .getHandle(run.workflowId, run.runId)
      .terminate('test environment stopped')
      .catch(() => {}); // finished meanwhile
  }
}

/**
 * A fresh namespace on the shared server at `address`, as a TemporalServer handle whose stop() quiets the namespace
 * (the server itself stays up for the rest of the run) and whose process controls refuse.
 */
export async function openSharedNamespace(address: string): Promise<TemporalServer> {
  const namespace = `test-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    address,
    namespace,
    dbFile: '',
    process: () => {
      throw new SharedServerError('control the process of');
    },
    restart: () => Promise.reject(new SharedServerError('restart')),
    stop() {
      stopped ??= quietNamespace(new Client({ connection, namespace })).finally(() => connection.close());
      return stopped;
    },
  };
}

/** `stack` (started without Temporal) with `temporal` in its place; stop() stops both. */
export function withTemporal(stack: DevStack, temporal: TemporalServer): DevStack {
  const servers = { temporal, s3: stack.s3, gcs: stack.gcs };
  return {
    ...servers,
    stateDir: stack.stateDir,
    env: () => stackEnv(servers),
    async stop() {
      const results = await Promise.allSettled([temporal.stop(), stack.stop()]);
      const failure = results.find((r) => r.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}
