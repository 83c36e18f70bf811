import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { locateBinary } from './binaries.ts';
import { freePorts } from './ports.ts';
import { type ManagedServer, manageServer, readyOrStopped, type ServerProcess, startProcess } from './process.ts';

export interface TemporalServer extends ManagedServer {
  /** host:port of the frontend gRPC service, for Connection.connect / NativeConnection.connect. */
  readonly address: string;
  readonly namespace: string;
  /** The SQLite file holding all state; it survives restart(). */
  readonly dbFile: string;
  /** `http://127.0.0.1:<port>` of the Temporal web UI, when started with `ui: true`. */
  readonly uiUrl?: string;
}

export interface StartTemporalOptions {
  /** Where temporal.db goes; a fresh temporary directory (removed on stop) when omitted. */
  stateDir?: string;
  /** Created at launch besides "default"; the handle's namespace. */
  namespace?: string;
  timeoutMs?: number;
  /** Extra `temporal server start-dev` flags, e.g. ['--dynamic-config-value', 'key=value']. */
  extraArgs?: string[];
  /** Serve the web UI on a free 127.0.0.1 port (`dev` does); tests and the demo run headless. */
  ui?: boolean;
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
    const [port, httpPort, metricsPort, uiPort] = ports as [number, number, number, number | undefined];
    const args = [
      'server',
      'start-dev',
      ...(uiPort === undefined ? ['--headless'] : ['--ui-ip', '127.0.0.1', '--ui-port', String(uiPort)]),
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
    return readyOrStopped(proc, () => namespaceAnswers(`127.0.0.1:${port}`, namespace), {
      timeoutMs,
      what: `describeNamespace(${namespace})`,
    });
  };
  const start = async () => {
    ports = await freePorts(options.ui ? 4 : 3);
    return launch();
  };
  const server = await manageServer(start, launch, { dir: stateDir, owned: ownsDir });
  return {
    ...server,
    address: `127.0.0.1:${ports[0]}`,
    namespace,
    dbFile,
    ...(options.ui ? { uiUrl: `http://127.0.0.1:${ports[3]}` } : {}),
  };
}
