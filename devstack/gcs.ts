import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { locateBinary } from './binaries.ts';
import { freePort } from './ports.ts';
import { type ManagedServer, manageServer, readyOrStopped, type ServerProcess, startProcess } from './process.ts';

export interface GcsServer extends ManagedServer {
  /** http://127.0.0.1:PORT, for STORAGE_EMULATOR_HOST (or `new Storage({ apiEndpoint })`). */
  readonly emulatorHost: string;
  readonly projectId: string;
  /** A Storage client pointed at the emulator (no credentials). */
  client(): Storage;
}

export interface StartGcsOptions {
  /** Holds the objects; a fresh temporary directory when omitted. */
  stateDir?: string;
  timeoutMs?: number;
}

export function gcsClientFor(emulatorHost: string, projectId = 'signal-kit-dev'): Storage {
  return new Storage({ apiEndpoint: emulatorHost, projectId });
}

/** fake-gcs-server over plain HTTP with a filesystem backend. */
export async function startGcs(options: StartGcsOptions = {}): Promise<GcsServer> {
  const binary = locateBinary('fake-gcs-server');
  const ownsDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'signal-kit-gcs-')));
  const root = join(stateDir, 'objects');
  await mkdir(root, { recursive: true });
  const timeoutMs = options.timeoutMs ?? 30_000;
  const projectId = 'signal-kit-dev';
  let port = 0;

  const launch = async (): Promise<ServerProcess> => {
    const host = `127.0.0.1:${port}`;
    const args = [
      '-scheme',
      'http',
      '-host',
      '127.0.0.1',
      '-port',
      String(port),
      '-backend',
      'filesystem',
      '-filesystem-root',
      root,
      // Resumable uploads are continued at the Location the server hands out: make it this address.
      '-public-host',
      host,
      '-external-url',
      `http://${host}`,
      '-log-level',
      'warn',
    ];
    const proc = startProcess({ name: 'fake-gcs-server', command: binary, args, cwd: stateDir, stateDir });
    const storage = new Storage({ apiEndpoint: `http://${host}`, projectId, retryOptions: { autoRetry: false } });
    return readyOrStopped(proc, () => storage.getBuckets(), { timeoutMs, what: 'getBuckets' });
  };
  const start = async () => {
    port = await freePort();
    return launch();
  };
  const server = await manageServer(start, launch, { dir: stateDir, owned: ownsDir });

  const emulatorHost = `http://127.0.0.1:${port}`;
  return { ...server, emulatorHost, projectId, client: () => gcsClientFor(emulatorHost, projectId) };
}
