import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { locateBinary } from './binaries.ts';
import { freePorts } from './ports.ts';
import { retryOnPortClash, type ServerProcess, startProcess, waitUntilReady } from './process.ts';

export interface TemporalServer {
  /** host:port of the frontend gRPC service, for Connection.connect / NativeConnection.connect. */
  readonly address: string;
  readonly namespace: string;
  /** The SQLite file holding all state; it survives restart(). */
  readonly dbFile: string;
  readonly process: () => ServerProcess;
  /** Stops the server (hard: SIGKILL, a crash) and starts it again on the same ports and database. */
  restart(options?: { hard?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface StartTemporalOptions {
  /** Where temporal.db goes; a fresh temporary directory (removed on stop) when omitted. */
  stateDir?: string;
  /** Created at launch besides "default"; the handle's namespace. */
  namespace?: string;
  timeoutMs?: number;
  /** Extra `temporal server start-dev` flags, e.g. ['--dynamic-config-value', 'key=value']. */
  extraArgs?: string[];
}

async function namespaceAnswers(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    await connection.withDeadline(Date.now() + 2_000, () =>
      connection.workflowService.describeNamespace({ namespace }),
    );
  } finally {
    await connection.close();
  }
}

export async function startTemporal(options: StartTemporalOptions = {}): Promise<TemporalServer> {
  const binary = locateBinary('temporal');
  const ownsDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'signal-kit-temporal-')));
  const namespace = options.namespace ?? 'default';
  const timeoutMs = options.timeoutMs ?? 60_000;
  const dbFile = join(stateDir, 'temporal.db');
  let ports: number[] = [];

  const launch = async (): Promise<ServerProcess> => {
    const [port, httpPort, metricsPort] = ports as [number, number, number];
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--db-filename',
      dbFile,
      '--log-level',
      'warn',
      ...(namespace !== 'default' ? ['--namespace', namespace] : []),
      ...(options.extraArgs ?? []),
    ];
    const proc = startProcess({ name: 'temporal', command: binary, args, cwd: stateDir, stateDir });
    try {
      await waitUntilReady(proc, () => namespaceAnswers(`127.0.0.1:${port}`, namespace), {
        timeoutMs,
        what: `describeNamespace(${namespace})`,
      });
    } catch (err) {
      await proc.stop(1_000);
      throw err;
    }
    return proc;
  };

  let current: ServerProcess;
  try {
    current = await retryOnPortClash(async () => {
      ports = await freePorts(3);
      return launch();
    });
  } catch (err) {
    if (ownsDir) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }

  return {
    address: `127.0.0.1:${ports[0]}`,
    namespace,
    dbFile,
    process: () => current,
    async restart({ hard = false, downMs = 0 } = {}) {
      await (hard ? current.kill() : current.stop());
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      current = await launch();
    },
    async stop() {
      await current.stop();
      if (ownsDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
}
