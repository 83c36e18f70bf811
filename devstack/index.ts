import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GcsServer, startGcs } from './gcs.ts';
import { removeOnExit } from './process.ts';
import { reapGroups } from './registry.ts';
import { type S3Server, startS3 } from './s3.ts';
import { startTemporal, type TemporalServer } from './temporal.ts';

export { locateBinary, locatePostgres, MissingBinaryError, MissingPostgresError } from './binaries.ts';
export { type GcsServer, gcsClientFor, startGcs } from './gcs.ts';
export { freePort } from './ports.ts';
export { type PostgresServer, startPostgres } from './postgres.ts';
export { type ServerProcess, ServerStartError } from './process.ts';
export { groupAlive, listGroups } from './registry.ts';
export { type S3Server, s3ClientFor, startS3 } from './s3.ts';
export { startTemporal, type TemporalServer } from './temporal.ts';

export interface DevStackOptions {
  temporal?: boolean;
  s3?: boolean;
  gcs?: boolean;
  /** A Temporal namespace to create besides "default" (the handle's namespace). */
  temporalNamespace?: string;
  /** Extra `temporal server start-dev` flags, e.g. dynamic config values. */
  temporalArgs?: string[];
  /** Serve Temporal's web UI (its URL is `temporal.uiUrl`). */
  temporalUi?: boolean;
  timeoutMs?: number;
}

export interface DevStack {
  /** A temporary directory holding every server's state; removed by stop(). */
  readonly stateDir: string;
  readonly temporal?: TemporalServer;
  readonly s3?: S3Server;
  readonly gcs?: GcsServer;
  /** The standard variables pointing a child process (CLI, worker) at this stack. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** The handle is known to be there when the option is true or left out. */
type Started<O, K extends keyof DevStackOptions, H> = (K extends keyof O ? O[K] : undefined) extends true | undefined
  ? { readonly [P in K]: H }
  : unknown;

/** A DevStack whose requested servers are typed as present (still assignable to a plain DevStack). */
export type DevStackWith<O extends DevStackOptions> = DevStack &
  Started<O, 'temporal', TemporalServer> &
  Started<O, 's3', S3Server> &
  Started<O, 'gcs', GcsServer>;

export function stackEnv(servers: { temporal?: TemporalServer; s3?: S3Server; gcs?: GcsServer }) {
  const env: Record<string, string> = {};
  if (servers.temporal) {
    env['TEMPORAL_ADDRESS'] = servers.temporal.address;
    env['TEMPORAL_NAMESPACE'] = servers.temporal.namespace;
  }
  if (servers.s3) {
    env['AWS_ENDPOINT_URL_S3'] = servers.s3.endpoint;
    env['AWS_REGION'] = servers.s3.region;
    env['AWS_ACCESS_KEY_ID'] = servers.s3.accessKeyId;
    env['AWS_SECRET_ACCESS_KEY'] = servers.s3.secretAccessKey;
  }
  if (servers.gcs) env['STORAGE_EMULATOR_HOST'] = servers.gcs.emulatorHost;
  return env;
}

/**
 * Starts the requested servers (all three by default) in parallel on free 127.0.0.1 ports and waits until each
 * answers a real client call. If any fails to start, the others are stopped and the first error is thrown.
 */
export async function startDevStack<const O extends DevStackOptions = Record<never, never>>(
  options: O = {} as O,
): Promise<DevStackWith<O>> {
  // Servers of an earlier run whose owner died without stopping them.
  await reapGroups();
  const stateDir = await mkdtemp(join(tmpdir(), 'signal-kit-dev-'));
  const keepState = removeOnExit(stateDir);
  const dir = async (name: string) => {
    const path = join(stateDir, name);
    await mkdir(path);
    return path;
  };
  const timeoutMs = options.timeoutMs;
  const starts = [
    options.temporal !== false
      ? startTemporal({
          stateDir: await dir('temporal'),
          namespace: options.temporalNamespace,
          timeoutMs,
          extraArgs: options.temporalArgs,
          ui: options.temporalUi,
        })
      : undefined,
    options.s3 !== false ? startS3({ stateDir: await dir('s3'), timeoutMs }) : undefined,
    options.gcs !== false ? startGcs({ stateDir: await dir('gcs'), timeoutMs }) : undefined,
  ] as const;
  const settled = await Promise.allSettled(starts.map((start) => start ?? Promise.resolve(undefined)));
  const [temporal, s3, gcs] = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as [
    TemporalServer | undefined,
    S3Server | undefined,
    GcsServer | undefined,
  ];
  const started = [temporal, s3, gcs].filter((server) => server !== undefined);

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      const results = await Promise.allSettled(started.map((server) => server.stop()));
      await rm(stateDir, { recursive: true, force: true });
      keepState();
      const failure = results.find((r) => r.status === 'rejected');
      if (failure) throw failure.reason;
    })();
    return stopped;
  };

  const failures = settled.filter((s) => s.status === 'rejected').map((s) => s.reason as unknown);
  if (failures.length > 0) {
    await stop().catch(() => {});
    if (failures.length === 1) throw failures[0];
    throw new AggregateError(failures, failures.map((f) => (f instanceof Error ? f.message : String(f))).join('\n\n'));
  }

  return {
    stateDir,
    temporal,
    s3,
    gcs,
    env: () => stackEnv({ temporal, s3, gcs }),
    stop,
  } as DevStackWith<O>;
}
