import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { locatePostgres } from './binaries.ts';
import { freePort } from './ports.ts';
import { type ManagedServer, manageServer, type ServerProcess, ServerStartError, startUntilReady } from './process.ts';

const run = promisify(execFile);

export interface PostgresServer extends ManagedServer {
  /** postgres://USER@127.0.0.1:PORT/postgres (trust authentication: no password). */
  readonly url: string;
  readonly port: number;
  readonly user: string;
  /** The self-signed certificate's PEM file, when started with `ssl`. */
  readonly certificate?: string;
  /** Creates a fresh database and returns its URL (one per test keeps tests apart on one server). */
  createDatabase(name: string): Promise<string>;
}

export interface StartPostgresOptions {
  timeoutMs?: number;
  /**
   * Also accept TLS, with a self-signed certificate made at start by `openssl` (for `CN=localhost`, valid a day):
   * its path is `certificate` on the server returned, for tests of `sslmode`.
   */
  ssl?: boolean;
}

const SUPERUSER = 'signalkit';

interface Account {
  name: string;
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root: as root, the server and initdb run as the `postgres` system user (Debian's
 * package creates it), else as `nobody`, owning the data folder. As anyone else, as that user.
 */
function serverAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // no passwd file: nothing to switch to
  }
  const accounts = new Map<string, Account>();
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name && uid && gid) accounts.set(name, { name, uid: Number(uid), gid: Number(gid) });
  }
  const account = accounts.get('postgres') ?? accounts.get('nobody');
  if (!account) throw new Error('PostgreSQL cannot run as root and neither a "postgres" nor a "nobody" user exists');
  return account;
}

/** A key and a self-signed certificate for `localhost`, owned by the server's account (PostgreSQL insists). */
async function selfSignedCertificate(
  dir: string,
  account: Account | undefined,
): Promise<{ cert: string; key: string }> {
  const cert = join(dir, 'server.crt');
  const key = join(dir, 'server.key');
  await run(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { timeout: 30_000 },
  ).catch((error: unknown) => {
    throw new ServerStartError('openssl', 'could not make a self-signed certificate', String(error), { cause: error });
  });
  await chmod(key, 0o600);
  if (account) {
    await chown(cert, account.uid, account.gid);
    await chown(key, account.uid, account.gid);
  }
  return { cert, key };
}

/** Answers a real query. */
async function answers(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A throwaway PostgreSQL server: `initdb` into a fresh temporary folder, then `postgres` on a free 127.0.0.1 port
 * (TCP only, no Unix socket), trust authentication, fsync off. The server programs are found by `locatePostgres`.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = locatePostgres();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const account = serverAccount();
  const ids = account ? { uid: account.uid, gid: account.gid } : {};
  const stateDir = await mkdtemp(join(tmpdir(), 'signal-kit-postgres-'));
  const dataDir = join(stateDir, 'data');
  await mkdir(dataDir, { mode: 0o700 });
  if (account) {
    await chown(stateDir, account.uid, account.gid);
    await chown(dataDir, account.uid, account.gid);
  }
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' };
  try {
    await run(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      { ...ids, env, cwd: stateDir, timeout: timeoutMs },
    );
  } catch (error) {
    const output = [(error as { stdout?: string }).stdout, (error as { stderr?: string }).stderr].join('\n').trim();
    const as = account ? ` as user ${account.name}` : '';
    throw new ServerStartError('initdb', `failed${as} in ${dataDir}`, output, { cause: error });
  }

  const certificate = options.ssl ? await selfSignedCertificate(stateDir, account) : undefined;
  const tls = certificate
    ? ['-c', 'ssl=on', '-c', `ssl_cert_file=${certificate.cert}`, '-c', `ssl_key_file=${certificate.key}`]
    : [];
  let port = 0;
  const url = (database = 'postgres') => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
  const launch = async (): Promise<ServerProcess> => {
    const args = [
      '-D',
      dataDir,
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-k',
      '',
      // A test server: nothing in it must outlive a crash of the machine.
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_wal_size=4GB',
      '-c',
      'timezone=UTC',
      ...tls,
    ];
    const postgres = { name: 'postgres', command: join(bin, 'postgres'), args, cwd: stateDir, stateDir, env, ...ids };
    return startUntilReady(postgres, () => answers(url()), { timeoutMs, what: 'select 1' });
  };
  const start = async () => {
    port = await freePort();
    return launch();
  };
  const server = await manageServer(start, launch, { dir: stateDir, owned: true });
  return {
    ...server,
    url: url(),
    port,
    ...(certificate ? { certificate: certificate.cert } : {}),
    user: SUPERUSER,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`create database ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(encodeURIComponent(name));
    },
  };
}
