/**
 * How `--into` connects, as libpq reads a connection URL: the settings of the connection service it names
 * (`service=` or `PGSERVICE`, service-file.ts) where the URL says nothing, `sslmode` with libpq's meanings
 * (node-postgres on its own treats `prefer`, `require` and `verify-ca` as `verify-full`, and accepts any other word
 * silently), `sslrootcert`, and the password from the URL, else the service's, else `PGPASSWORD`, else the password
 * file (`~/.pgpass` or `PGPASSFILE`), which node-postgres reads as libpq does: the last three keep it out of the
 * command line that `ps` shows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ClientConfig } from 'pg';
import { parse } from 'pg-connection-string';
import { InputError } from '../errors.ts';
import { resolveService } from './service-file.ts';

export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The URL's `sslmode` (libpq's default, `prefer`, when it has none); any other word is refused by name. */
export function sslModeOf(url: string): SslMode {
  const mode = new URL(url).searchParams.get('sslmode') ?? 'prefer';
  if (!(SSL_MODES as readonly string[]).includes(mode)) {
    throw new InputError(`sslmode=${mode} is not one of libpq's modes: ${SSL_MODES.join(', ')}`);
  }
  return mode as SslMode;
}

/** libpq's default root certificate, used by the verifying modes when the URL names none. */
const DEFAULT_ROOT_CERT = join(homedir(), '.postgresql', 'root.crt');

/**
 * The connections to try, in order, for the URL's mode: `allow` tries without TLS first, `prefer` with TLS first
 * (unverified) and falls back to a plain connection; `require` encrypts without verifying (with `sslrootcert`, as
 * `verify-ca`); `verify-ca` checks the chain but not the host name; `verify-full` checks both.
 */
export function connectionAttempts(url: string): ClientConfig[] {
  const service = resolveService(url);
  const mode = sslModeOf(service.url);
  const stripped = new URL(service.url);
  stripped.searchParams.delete('sslmode');
  stripped.searchParams.delete('uselibpqcompat');
  const { ssl: files, ...config } = parse(stripped.href) as ClientConfig & { ssl?: Record<string, unknown> | boolean };
  const tls: Record<string, unknown> = typeof files === 'object' && files ? { ...files } : {};
  const base = { ...(config as ClientConfig), connectionTimeoutMillis: 10_000 };
  if (!base.password && service.password !== undefined) base.password = service.password;
  const unverified = { ...tls, rejectUnauthorized: false };
  const withRoot = () => {
    if (tls['ca'] !== undefined) return tls;
    if (existsSync(DEFAULT_ROOT_CERT)) return { ...tls, ca: readFileSync(DEFAULT_ROOT_CERT, 'utf8') };
    return undefined;
  };
  const anyHost = { checkServerIdentity: () => undefined };
  switch (mode) {
    case 'disable':
      return [{ ...base, ssl: false }];
    case 'allow':
      return [
        { ...base, ssl: false },
        { ...base, ssl: unverified },
      ];
    case 'prefer':
      return [
        { ...base, ssl: unverified },
        { ...base, ssl: false },
      ];
    case 'require':
      return [{ ...base, ssl: tls['ca'] !== undefined ? { ...tls, ...anyHost } : unverified }];
    case 'verify-ca': {
      const root = withRoot();
      if (!root) {
        throw new InputError(
          `sslmode=verify-ca needs a root certificate: add sslrootcert=<file> or ${DEFAULT_ROOT_CERT}`,
        );
      }
      return [{ ...base, ssl: { ...root, ...anyHost } }];
    }
    case 'verify-full':
      return [{ ...base, ssl: withRoot() ?? tls }];
  }
}
