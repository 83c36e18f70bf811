/**
 * libpq's connection service file (https://www.postgresql.org/docs/current/libpq-pgservice.html), read as libpq reads
 * it: the service named by `service=` in the URL, else by `PGSERVICE`, is looked up in the user's file (`servicefile=`
 * in the URL, else `PGSERVICEFILE`, else `~/.pg_service.conf`) and, when not defined there, in the system-wide
 * `pg_service.conf` (in `PGSYSCONFDIR`, else /etc). Its settings fill what the URL does not say (the URL's own wins;
 * the service's win over the `PG*` environment variables, which only fill what is still unset), and its `password`
 * is used without ever being part of a URL, so that it stays out of the command line `ps` shows. A service defined
 * nowhere, a line that is not `keyword=value`, or a keyword the kit cannot honour is refused by name and line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../errors.ts';

/** The keywords a service may set, each honoured by the connection (node-postgres and connection.ts). */
const SERVICE_KEYWORDS = new Set([
  'host',
  'hostaddr',
  'port',
  'dbname',
  'user',
  'password',
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'application_name',
  'options',
  'client_encoding',
  'connect_timeout',
]);

/** A connection URL with its service's settings filled in, and the service's password (never put in the URL). */
export interface ServiceResolved {
  url: string;
  password?: string;
  /** The service used, and the file it was defined in. */
  service?: { name: string; file: string };
}

/** The service the URL (or `PGSERVICE`) names, if any. */
export function serviceNameOf(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return new URL(url).searchParams.get('service') ?? (env['PGSERVICE'] || undefined);
}

/** The URL with the settings of the service it names filled in where it says nothing (see the module's comment). */
export function resolveService(url: string, env: NodeJS.ProcessEnv = process.env): ServiceResolved {
  const name = serviceNameOf(url, env);
  const resolved = new URL(url);
  resolved.searchParams.delete('service');
  const userFile =
    resolved.searchParams.get('servicefile') ?? env['PGSERVICEFILE'] ?? join(homedir(), '.pg_service.conf');
  resolved.searchParams.delete('servicefile');
  if (name === undefined) return { url: resolved.href };
  const systemFile = join(env['PGSYSCONFDIR'] ?? '/etc', 'pg_service.conf');
  let found: { file: string; settings: Map<string, string> } | undefined;
  for (const file of [userFile, systemFile]) {
    const settings = existsSync(file) ? serviceSettings(readFileSync(file, 'utf8'), name, file) : undefined;
    if (settings) {
      found = { file, settings };
      break;
    }
  }
  if (!found) {
    throw new InputError(`definition of service "${name}" not found (looked in ${userFile} and ${systemFile})`);
  }
  const said = (param: string, inUrl: boolean) => inUrl || resolved.searchParams.has(param);
  let password: string | undefined;
  for (const [keyword, value] of found.settings) {
    switch (keyword) {
      case 'host':
      case 'hostaddr':
        if (said('host', resolved.hostname !== '')) break;
        // A directory is a Unix socket's: node-postgres takes it as the `host` parameter.
        if (value.startsWith('/')) resolved.searchParams.set('host', value);
        else resolved.hostname = value;
        break;
      case 'port':
        if (!said('port', resolved.port !== '')) resolved.port = value;
        break;
      case 'user':
        if (!said('user', resolved.username !== '')) resolved.username = value;
        break;
      case 'dbname':
        if (!said('dbname', resolved.pathname !== '' && resolved.pathname !== '/')) resolved.pathname = `/${value}`;
        break;
      case 'password':
        if (!said('password', resolved.password !== '')) password = value;
        break;
      default:
        if (!resolved.searchParams.has(keyword)) resolved.searchParams.set(keyword, value);
    }
  }
  return { url: resolved.href, ...(password !== undefined ? { password } : {}), service: { name, file: found.file } };
}

/**
 * The settings of `[name]` in a service file's text, in order, or undefined when it defines no such service. Like
 * libpq: leading whitespace and trailing whitespace are dropped, blank lines and `#` comments skipped, and the first
 * section of that name is the one read.
 */
export function serviceSettings(text: string, name: string, file: string): Map<string, string> | undefined {
  let settings: Map<string, string> | undefined;
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      if (settings) break;
      if (line === `[${name}]`) settings = new Map();
      continue;
    }
    if (!settings) continue;
    const at = line.indexOf('=');
    const where = `service file ${file}, line ${i + 1}`;
    if (at <= 0) throw new InputError(`syntax error in ${where}: not keyword=value`);
    // As libpq: the keyword is all before the first `=` and the value all after it (`host = x` names no keyword).
    const keyword = line.slice(0, at);
    if (keyword === 'service') throw new InputError(`${where}: nested service specifications are not supported`);
    if (!SERVICE_KEYWORDS.has(keyword)) {
      throw new InputError(
        `${where}: "${keyword}" is not a setting signal-kit load can use (${[...SERVICE_KEYWORDS].join(', ')})`,
      );
    }
    if (!settings.has(keyword)) settings.set(keyword, line.slice(at + 1));
  }
  return settings;
}
