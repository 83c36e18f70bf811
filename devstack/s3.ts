import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { locateBinary } from './binaries.ts';
import { freePort } from './ports.ts';
import { retryOnPortClash, type ServerProcess, ServerStartError, startProcess, waitUntilReady } from './process.ts';

export interface S3Server {
  /** http://127.0.0.1:PORT, for AWS_ENDPOINT_URL_S3 (path-style addressing). */
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly process: () => ServerProcess;
  /** An S3 client configured for this server (the caller destroys it). */
  client(): S3Client;
  restart(options?: { hard?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface StartS3Options {
  /** Holds the buckets (and the metadata sidecar when needed); a fresh temporary directory when omitted. */
  stateDir?: string;
  timeoutMs?: number;
  /** The region the server signs for (default us-east-1); requests signed for another one are refused. */
  region?: string;
}

export function s3ClientFor(server: Pick<S3Server, 'endpoint' | 'region' | 'accessKeyId' | 'secretAccessKey'>) {
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}

/** versitygw, posix backend: buckets are directories under <stateDir>/buckets. */
export async function startS3(options: StartS3Options = {}): Promise<S3Server> {
  const binary = locateBinary('versitygw');
  const ownsDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'signal-kit-s3-')));
  const root = join(stateDir, 'buckets');
  const sidecar = join(stateDir, 'meta');
  await mkdir(root, { recursive: true });
  const timeoutMs = options.timeoutMs ?? 30_000;
  const credentials = {
    region: options.region ?? 'us-east-1',
    accessKeyId: `SK${randomBytes(9).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  };
  let port = 0;
  // Object metadata lives in xattrs when the filesystem has them, else in a sidecar directory (decided once).
  let useSidecar = false;

  const launch = async (): Promise<ServerProcess> => {
    if (useSidecar) await mkdir(sidecar, { recursive: true });
    const args = [
      '--port',
      `127.0.0.1:${port}`,
      '--access',
      credentials.accessKeyId,
      '--secret',
      credentials.secretAccessKey,
      '--region',
      credentials.region,
      '--quiet',
      'posix',
      ...(useSidecar ? ['--sidecar', sidecar] : []),
      root,
    ];
    // The credentials are passed as flags; keep versitygw from also reading stray ROOT_* variables.
    const env = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith('VGW_') || key.startsWith('ROOT_')) delete env[key];
    const proc = startProcess({ name: 'versitygw', command: binary, args, cwd: stateDir, stateDir, env });
    const client = s3ClientFor({ endpoint: `http://127.0.0.1:${port}`, ...credentials });
    try {
      await waitUntilReady(proc, () => client.send(new ListBucketsCommand({})), { timeoutMs, what: 'ListBuckets' });
    } catch (err) {
      await proc.stop(1_000);
      throw err;
    } finally {
      client.destroy();
    }
    return proc;
  };

  let current: ServerProcess;
  try {
    current = await retryOnPortClash(async () => {
      port = await freePort();
      try {
        return await launch();
      } catch (err) {
        if (useSidecar || !(err instanceof ServerStartError && /xattr/i.test(err.output))) throw err;
        useSidecar = true;
        return launch();
      }
    });
  } catch (err) {
    if (ownsDir) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }

  const handle: S3Server = {
    endpoint: `http://127.0.0.1:${port}`,
    ...credentials,
    process: () => current,
    client: () => s3ClientFor(handle),
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
  return handle;
}
