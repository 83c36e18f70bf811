import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Storage } from '@google-cloud/storage';
import { locateBinary } from './binaries.ts';
import { freePort } from './ports.ts';
import { retryOnPortClash, type ServerProcess, startProcess, waitUntilReady } from './process.ts';

export interface GcsServer {
  /** http://127.0.0.1:PORT, for STORAGE_EMULATOR_HOST (or `new Storage({ apiEndpoint })`). */
  readonly emulatorHost: string;
  readonly projectId: string;
  readonly process: () => ServerProcess;
  /** A Storage client pointed at the emulator (no credentials). */
  client(): Storage;
  restart(options?: { hard?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
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
    try {
      await waitUntilReady(proc, () => storage.getBuckets(), { timeoutMs, what: 'getBuckets' });
    } catch (err) {
      await proc.stop(1_000);
      throw err;
    }
    return proc;
  };

  let current: ServerProcess;
  try {
    current = await retryOnPortClash(async () => {
      port = await freePort();
      return launch();
    });
  } catch (err) {
    if (ownsDir) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }

  const emulatorHost = `http://127.0.0.1:${port}`;
  return {
    emulatorHost,
    projectId,
    process: () => current,
    client: () => gcsClientFor(emulatorHost, projectId),
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
