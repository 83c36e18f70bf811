import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { locateBinary } from './binaries.ts';
import { freePort } from './ports.ts';
import { type ManagedServer, manageServer, type ServerProcess, ServerStartError, startUntilReady } from './process.ts';

export interface S3Server extends ManagedServer {
  /** http://127.0.0.1:PORT, for AWS_ENDPOINT_URL_S3 (path-style addressing). */
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** An S3 client configured for this server (the caller destroys it). */
  client(): S3Client;
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
    const versitygw = { name: 'versitygw', command: binary, args, cwd: stateDir, stateDir, env };
    const client = s3ClientFor({ endpoint: `http://127.0.0.1:${port}`, ...credentials });
    try {
      return await startUntilReady(versitygw, () => client.send(new ListBucketsCommand({})), {
        timeoutMs,
        what: 'ListBuckets',
      });
    } finally {
      client.destroy();
    }
  };
  const start = async () => {
    port = await freePort();
    try {
      return await launch();
    } catch (err) {
      if (useSidecar || !(err instanceof ServerStartError && /xattr/i.test(err.output))) throw err;
      useSidecar = true;
      return launch();
    }
  };
  const server = await manageServer(start, launch, { dir: stateDir, owned: ownsDir });

  const handle: S3Server = {
    ...server,
    endpoint: `http://127.0.0.1:${port}`,
    ...credentials,
    client: () => s3ClientFor(handle),
  };
  return handle;
}
