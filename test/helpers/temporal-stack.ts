import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogLevel,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { type DevStackOptions, type DevStackWith, startDevStack } from '../../devstack/index.ts';
import { openSharedNamespace, sharedTemporalAddress, withTemporal } from '../../testkit/shared-temporal.ts';

/**
 * startDevStack, except that Temporal is a namespace of its own on the run's shared server when there is one and the
 * options ask nothing special of the server.
 */
export async function startTestStack<const O extends DevStackOptions>(services: O): Promise<DevStackWith<O>> {
  const shared = services.temporal !== false && !services.temporalArgs ? sharedTemporalAddress() : undefined;
  if (!shared) return startDevStack(services);
  const stack = await startDevStack({ ...services, temporal: false });
  try {
    return withTemporal(stack, await openSharedNamespace(shared)) as DevStackWith<O>;
  } catch (error) {
    await stack.stop();
    throw error;
  }
}

/**
 * Installs the Temporal runtime's logger (once per test file), then starts the dev stack and bundles the workflows
 * side by side, since both take seconds. The stack's Temporal is a server of its own (a test may restart it).
 */
export async function startStackAndBundle<const O extends DevStackOptions>(
  services: O,
  workflowsPath: string,
  runtimeLogLevel: LogLevel = 'ERROR',
): Promise<[DevStackWith<O>, WorkflowBundleWithSourceMap]> {
  Runtime.install({ logger: new DefaultLogger(runtimeLogLevel) });
  return Promise.all([
    startDevStack(services),
    bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }),
  ]);
}

/** What a test of workflows run by in-process workers needs: the stack, the bundle, a client and a scratch directory. */
export interface WorkflowTestbed<O extends DevStackOptions> {
  stack: DevStackWith<O>;
  bundle: WorkflowBundleWithSourceMap;
  client: Client;
  /** A fresh temporary directory, removed by stop(). */
  workDir: string;
  /** A worker of the bundle on its own native connection (closed once the worker has stopped, when `done` settles). */
  startWorker(
    options: Omit<WorkerOptions, 'connection' | 'namespace' | 'workflowBundle'>,
  ): Promise<{ worker: Worker; done: Promise<void> }>;
  /** Closes the client, stops the stack and removes workDir; the test shuts its workers down first. */
  stop(): Promise<void>;
}

/** Starts the stack (Temporal on the shared server if any) and bundles `workflowsPath`, then connects a client. */
export async function startWorkflowTestbed<const O extends DevStackOptions & { temporal: true }>(
  services: O,
  workflowsPath: string,
  label: string,
): Promise<WorkflowTestbed<O>> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const [stack, bundle] = await Promise.all([
    startTestStack(services),
    bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }),
  ]);
  const temporal = stack.temporal!;
  let workDir: string | undefined;
  try {
    workDir = await mkdtemp(join(tmpdir(), `signal-kit-${label}-`));
    const connection = await Connection.connect({ address: temporal.address });
    const removeWorkDir = () => rm(workDir!, { recursive: true, force: true });
    return {
      stack,
      bundle,
      client: new Client({ connection, namespace: temporal.namespace }),
      workDir,
      async startWorker(options) {
        const nativeConnection = await NativeConnection.connect({ address: temporal.address });
        const worker = await Worker.create({
          ...options,
          connection: nativeConnection,
          namespace: temporal.namespace,
          workflowBundle: bundle,
        });
        return { worker, done: worker.run().finally(() => nativeConnection.close()) };
      },
      async stop() {
        await connection.close();
        await stack.stop();
        await removeWorkDir();
      },
    };
  } catch (error) {
    await stack.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}
