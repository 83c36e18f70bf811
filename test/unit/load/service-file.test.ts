/**
 * `--into` reads libpq's connection service file as libpq does (connectors/postgres/service-file.ts): the service
 * named by the URL or PGSERVICE, in the user's file and else the system-wide one, filling only what the URL does not
 * say, its password kept out of the URL; a service defined nowhere or a line libpq would not read refused by name.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectionAttempts } from '../../../connectors/postgres/connection.ts';
import { resolveService } from '../../../connectors/postgres/service-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'signal-kit-pgservice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const userFile = join(dir, 'user.conf');
const sysDir = join(dir, 'etc');
writeFileSync(
  userFile,
  [
    '# comment',
    '  [warehouse]',
    'host=db.example.com',
    'port=6543',
    'user=loader',
    'password=s3cret=with=equals',
    'dbname=crm',
    'sslmode=require',
    'password=ignored-second',
    '',
    '[socket]',
    'host=/var/run/postgresql',
    'dbname=crm',
    '[bad-line]',
    'host',
    '[nested]',
    'service=warehouse',
    '[unknown-keyword]',
    'gsslib=gssapi',
    '[spaced]',
    'host = db.example.com',
  ].join('\n'),
);
mkdirSync(sysDir);

const env = (extra: Record<string, string> = {}) => ({ PGSERVICEFILE: userFile, PGSYSCONFDIR: sysDir, ...extra });

describe('the connection service file', () => {
  it('fills host, port, user, database and settings from the service; the password is returned, never in the URL', () => {
    const resolved = resolveService('postgresql:///?service=warehouse', env());
    const url = new URL(resolved.url);
    expect([url.hostname, url.port, url.username, url.pathname]).toEqual(['db.example.com', '6543', 'loader', '/crm']);
    expect(url.searchParams.get('sslmode')).toBe('require');
    expect(url.searchParams.has('service')).toBe(false);
    // The first setting of a keyword is the one used, as libpq does; `=` after the first belongs to the value.
    expect(resolved.password).toBe('s3cret=with=equals');
    expect(resolved.url).not.toContain('s3cret');
    expect(resolved.service).toEqual({ name: 'warehouse', file: userFile });
  });

  it("lets the URL's own settings win over the service's, and PGSERVICE name the service", () => {
    const resolved = resolveService(
      'postgresql://me:mine@here:5432/other?sslmode=disable',
      env({ PGSERVICE: 'warehouse' }),
    );
    const url = new URL(resolved.url);
    expect([url.hostname, url.port, url.username, url.password, url.pathname]).toEqual([
      'here',
      '5432',
      'me',
      'mine',
      '/other',
    ]);
    expect(url.searchParams.get('sslmode')).toBe('disable');
    expect(resolved.password).toBeUndefined();
  });

  it("hands the service's password to the connection (over PGPASSWORD, which node-postgres reads only when none is set)", () => {
    process.env['PGSERVICEFILE'] = userFile;
    try {
      const [config] = connectionAttempts('postgresql:///?service=warehouse');
      expect(config).toMatchObject({ host: 'db.example.com', port: '6543', user: 'loader', database: 'crm' });
      expect(config?.password).toBe('s3cret=with=equals');
    } finally {
      delete process.env['PGSERVICEFILE'];
    }
  });

  it('takes a directory host as a Unix socket', () => {
    const url = new URL(resolveService('postgresql:///?service=socket', env()).url);
    expect(url.searchParams.get('host')).toBe('/var/run/postgresql');
  });

  it('looks in the system-wide file when the user file does not define the service; the user file wins', () => {
    writeFileSync(
      join(sysDir, 'pg_service.conf'),
      '[system-only]\nhost=sys.example.com\n[warehouse]\nhost=sys.example.com\n',
    );
    expect(new URL(resolveService('postgresql:///?service=system-only', env()).url).hostname).toBe('sys.example.com');
    expect(new URL(resolveService('postgresql:///?service=warehouse', env()).url).hostname).toBe('db.example.com');
  });

  it('refuses a service defined nowhere, and lines libpq would not read, by name and line', () => {
    expect(() => resolveService('postgresql:///?service=nowhere', env())).toThrow(
      'definition of service "nowhere" not found',
    );
    expect(() => resolveService('postgresql:///?service=bad-line', env())).toThrow(/line 15: not keyword=value/);
    expect(() => resolveService('postgresql:///?service=nested', env())).toThrow(/line 17: nested service/);
    expect(() => resolveService('postgresql:///?service=unknown-keyword', env())).toThrow(/line 19: "gsslib"/);
    expect(() => resolveService('postgresql:///?service=spaced', env())).toThrow(/line 21: "host "/);
  });

  it('changes nothing when no service is named', () => {
    expect(resolveService('postgresql://u@h/db?sslmode=require', {}).url).toBe('postgresql://u@h/db?sslmode=require');
  });
});
