import { createHash } from 'node:crypto';
/**
 * `signal-kit load` as a user runs it (the CLI in a child process) on the output of real enrich jobs, into a real
 * PostgreSQL: the tables hold what the job wrote, value by value, in the documented types; a reload changes nothing;
 * a job without flat parts loads the same rows from its output lines; a part that is not the one its manifest names
 * is refused by name and nothing is loaded; a bad database URL is a usage mistake (exit 2).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { connectionAttempts } from '../../connectors/postgres/connection.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import { runCli } from '../helpers/cli.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { readJobOutput } from '../helpers/output.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const DOMAINS = 120;
const JUNK = ['', 'not a website'];

type Line = Record<string, unknown>;
interface LoadReport {
  tables: { table: string; from: string; format?: string; inserted: number; updated: number }[];
}
type Signal = { signal_id: string; detected_at: string; signal_type: string; data: Record<string, unknown> };

describe('signal-kit load into PostgreSQL', () => {
  const job = useJobEnv('load', { sandbox: { seed: 41, clock: () => CLOCK } });
  let server: PostgresServer;
  let url: string;
  let db: pg.Client;
  const outputs: Record<string, string> = {};
  let lines: Line[] = [];

  const load = (manifest: string, ...extra: string[]) =>
    runCli(
      ['load', '--manifest', manifest, '--into', url, ...extra],
      { cwd: job.dir, env: process.env as Record<string, string>, timeout: 60_000 },
      'throw',
    );
  const manifestOf = (name: string, jobId: string) => `${outputs[name]}/${jobId}/_manifest.json`;
  const query = async <T extends pg.QueryResultRow>(sql: string) => (await db.query<T>(sql)).rows;

  /** Runs an enrich job on `csv` (a file in the job's folder) to completion; its manifest's URL. */
  async function enrichJob(jobId: string, csv: string, extra: Partial<BulkEnrichInput>): Promise<string> {
    const c = job.env.config();
    const output = pathToFileURL(join(job.dir, `${jobId}-out`)).href;
    const input: BulkEnrichInput = {
      jobId,
      input: pathToFileURL(join(job.dir, csv)).href,
      output,
      taskQueue: c.taskQueue,
      apiTaskQueue: c.apiTaskQueue,
      ...extra,
    };
    const result: JobResult = await job.env.client.workflow.execute('bulkEnrich', {
      workflowId: jobId,
      taskQueue: c.taskQueue,
      args: [input],
    });
    expect(result.status).toBe('completed');
    return `${output}/${jobId}/_manifest.json`;
  }

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase('load');
    db = new pg.Client({ connectionString: url });
    await db.connect();
    await job.env.startWorker();
    const rows = ['id,website'];
    for (let i = 0; i < DOMAINS; i++) rows.push(`${i},load${i}.com`);
    for (const [i, junk] of JUNK.entries()) rows.push(`j${i},"${junk}"`);
    await writeFile(join(job.dir, 'crm.csv'), `${rows.join('\n')}\n`);
    const c = job.env.config();
    for (const [name, formats] of [
      ['flat', ['jsonl', 'csv'] as const],
      ['lines', undefined],
      ['parquet', ['parquet'] as const],
    ] as const) {
      outputs[name] = pathToFileURL(join(job.dir, name)).href;
      const input: BulkEnrichInput = {
        jobId: `load-${name}`,
        input: pathToFileURL(join(job.dir, 'crm.csv')).href,
        output: outputs[name],
        options: { limit: 5 },
        ...(formats ? { formats: [...formats] } : {}),
        taskQueue: c.taskQueue,
        apiTaskQueue: c.apiTaskQueue,
      };
      const result: JobResult = await job.env.client.workflow.execute('bulkEnrich', {
        workflowId: input.jobId,
        taskQueue: c.taskQueue,
        args: [input],
      });
      expect(result.status).toBe('completed');
    }
    lines = (await readJobOutput(outputs['flat'] as string, 'load-flat')).lines;
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
  });

  it('loads rows, signals and invalid rows as the job wrote them, in the documented types', async () => {
    const result = await load(manifestOf('flat', 'load-flat'));
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as LoadReport;
    const answered = lines.filter((line) => line['status'] !== 'invalid');
    const signals = answered.flatMap((line) => (line['signals'] as Signal[] | undefined) ?? []);
    expect(answered).toHaveLength(DOMAINS);
    expect(signals.length).toBeGreaterThan(50);
    expect(report.tables.map(({ table, from, format, inserted }) => ({ table, from, format, inserted }))).toEqual([
      { table: 'signal_kit_enrich_rows', from: 'table', format: 'jsonl', inserted: DOMAINS },
      {
        table: 'signal_kit_signals',
        from: 'table',
        format: 'jsonl',
        inserted: new Set(signals.map((s) => s.signal_id)).size,
      },
      { table: 'signal_kit_invalid', from: 'table', format: 'jsonl', inserted: JUNK.length },
    ]);

    // Every signal once, with the job's values.
    const stored = await query<{ signal_id: string; record_id: string; detected_at: Date; summary: string }>(
      'select signal_id, record_id, detected_at, summary from signal_kit_signals',
    );
    const byId = new Map(stored.map((row) => [row.signal_id, row]));
    expect(byId.size).toBe(stored.length);
    for (const line of answered) {
      for (const signal of (line['signals'] as Signal[] | undefined) ?? []) {
        const row = byId.get(signal.signal_id);
        expect(row, signal.signal_id).toBeDefined();
        expect(row?.record_id).toBe(line['record_id']);
        expect(row?.detected_at.getTime()).toBe(Date.parse(signal.detected_at));
        expect(row?.summary).toBe(signal.data['summary'] ?? null);
      }
    }
    // One row per answered input row, keyed by its CRM id, else by its domain.
    const rows = await query<{ row_key: string; status: string; signal_count: number }>(
      'select row_key, status, signal_count from signal_kit_enrich_rows order by "row"',
    );
    const key = (line: Line) => (line['record_id'] ? `id:${line['record_id']}` : `domain:${line['domain']}`);
    expect(rows.map((row) => row.row_key)).toEqual(answered.map(key));
    const invalid = await query<{ row: number; raw: unknown; error: string }>(
      'select "row", raw, error from signal_kit_invalid order by "row"',
    );
    const junk = lines.filter((line) => line['status'] === 'invalid');
    expect(invalid).toEqual(junk.map((line) => ({ row: line['row'], raw: line['raw'], error: line['error'] })));

    // The documented types (docs/load.md), as PostgreSQL reports them.
    const types = await query<{ table_name: string; column_name: string; data_type: string }>(
      `select table_name, column_name, data_type from information_schema.columns
       where table_name like 'signal_kit_%' and column_name in
         ('detected_at', 'row', 'relevance', 'data', 'highlights', 'filing_date', 'signal_counts', 'raw', 'row_key', 'source_finished_at')`,
    );
    const typeOf = (table: string, column: string) =>
      types.find((t) => t.table_name === table && t.column_name === column)?.data_type;
    expect(typeOf('signal_kit_signals', 'detected_at')).toBe('timestamp with time zone');
    expect(typeOf('signal_kit_signals', 'row')).toBe('integer');
    expect(typeOf('signal_kit_signals', 'relevance')).toBe('double precision');
    expect(typeOf('signal_kit_signals', 'data')).toBe('jsonb');
    expect(typeOf('signal_kit_signals', 'highlights')).toBe('jsonb');
    expect(typeOf('signal_kit_signals', 'filing_date')).toBe('date');
    expect(typeOf('signal_kit_enrich_rows', 'signal_counts')).toBe('jsonb');
    expect(typeOf('signal_kit_enrich_rows', 'row_key')).toBe('text');
    expect(typeOf('signal_kit_invalid', 'raw')).toBe('jsonb');
    expect(typeOf('signal_kit_invalid', 'source_finished_at')).toBe('timestamp with time zone');
  });

  /** Every row's version (xmin) per table: a load that rewrites nothing leaves it as it was. */
  const snapshot = (prefix: string) =>
    query<{ t: string; n: number; versions: string }>(
      `select 'signals' as t, count(*)::int as n, string_agg(xmin::text, ',' order by signal_id) as versions from ${prefix}signals
       union all select 'rows', count(*)::int, string_agg(xmin::text, ',' order by row_key) from ${prefix}enrich_rows
       union all select 'invalid', count(*)::int, string_agg(xmin::text, ',' order by "row") from ${prefix}invalid`,
    );

  /** The tables under `prefix` hold the rows of `signal_kit_`'s (the JSONL load's), value for value and type for type. */
  const expectSameTables = async (prefix: string) => {
    for (const [table, key] of [
      ['signals', 'signal_id'],
      ['enrich_rows', 'row_key'],
      ['invalid', '"row"'],
    ]) {
      // to_jsonb keeps each value's type: a timestamptz, a number and a text holding the same digits differ.
      const columns = `to_jsonb(t) - 'source_manifest' - 'source_finished_at'`;
      const flat = await query(`select ${columns} as r from signal_kit_${table} t order by ${key}`);
      const other = await query(`select ${columns} as r from ${prefix}${table} t order by ${key}`);
      expect(other.length, table).toBe(flat.length);
      expect(other, table).toEqual(flat);
    }
    const types = (p: string) =>
      query(
        `select replace(table_name, '${p}', '') as t, column_name, data_type from information_schema.columns
         where table_name like '${p}%' order by table_name, ordinal_position`,
      );
    expect(await types(prefix)).toEqual(await types('signal_kit_'));
  };

  it('changes nothing when the same manifest is loaded again', async () => {
    const before = await snapshot('signal_kit_');
    const result = await load(manifestOf('flat', 'load-flat'));
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as LoadReport;
    for (const table of report.tables) expect(table).toMatchObject({ inserted: 0, updated: 0 });
    // Not a row rewritten: every row version (xmin) is the one the first load wrote.
    expect(await snapshot('signal_kit_')).toEqual(before);
  });

  it('loads a job without flat parts from its output lines: the same rows', async () => {
    const result = await load(manifestOf('lines', 'load-lines'), '--table-prefix', 'from_lines_');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as LoadReport;
    expect(report.tables.map((t) => t.from)).toEqual(['lines', 'lines', 'lines']);
    await expectSameTables('from_lines_');
  });

  it('loads a job run with --format parquet only from its Parquet parts: the same rows and types; a reload changes nothing', async () => {
    const result = await load(manifestOf('parquet', 'load-parquet'), '--table-prefix', 'from_parquet_');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as LoadReport;
    expect(report.tables.map((t) => [t.table, t.from, t.format])).toEqual([
      ['from_parquet_enrich_rows', 'table', 'parquet'],
      ['from_parquet_signals', 'table', 'parquet'],
      ['from_parquet_invalid', 'table', 'parquet'],
    ]);
    await expectSameTables('from_parquet_');

    const before = await snapshot('from_parquet_');
    const again = await load(manifestOf('parquet', 'load-parquet'), '--table-prefix', 'from_parquet_');
    expect(again.code, again.stderr).toBe(0);
    for (const table of (JSON.parse(again.stdout) as LoadReport).tables) {
      expect(table).toMatchObject({ inserted: 0, updated: 0 });
    }
    expect(await snapshot('from_parquet_')).toEqual(before);
  });

  it.each([
    ['flat', 'load-flat', '.jsonl.gz'],
    ['parquet', 'load-parquet', '.parquet'],
  ])(
    'refuses a part whose bytes are not the ones its manifest names, loading nothing (%s)',
    async (name, jobId, ext) => {
      const manifestPath = join(job.dir, name, jobId, '_manifest.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { parts: { key: string; table?: string }[] };
      const part = manifest.parts.find((p) => p.table === 'signals' && p.key.endsWith(ext));
      expect(part).toBeDefined();
      const path = join(job.dir, name, part?.key as string);
      const original = await readFile(path);
      const bytes = Buffer.from(original);
      bytes[bytes.length - 5] = (bytes[bytes.length - 5] as number) ^ 0xff;
      await writeFile(path, bytes);
      const prefix = `tampered_${name}_`;
      const result = await load(manifestOf(name, jobId), '--table-prefix', prefix);
      // The job's part as it was, for the tests after this one that load the same job.
      await writeFile(path, original);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`PartChecksumError: part ${part?.key} does not match its manifest`);
      // One transaction: not even the tables it had created before reaching the part are left.
      expect(
        await query(`select table_name from information_schema.tables where table_name like '${prefix}%'`),
      ).toEqual([]);
    },
  );

  it('loads the same jobs into a DuckDB file (JSONL, Parquet and output lines): the rows PostgreSQL holds, value for value; a reload changes nothing', async () => {
    const file = join(job.dir, 'warehouse.duckdb');
    const into = `duckdb://${file}`;
    for (const [name, prefix] of [
      ['flat', 'signal_kit_'],
      ['lines', 'from_lines_'],
      ['parquet', 'from_parquet_'],
    ] as const) {
      const result = await load(manifestOf(name, `load-${name}`), '--into', into, '--table-prefix', prefix);
      expect(result.code, result.stderr).toBe(0);
    }
    const again = await load(manifestOf('flat', 'load-flat'), '--into', into);
    expect(again.code, again.stderr).toBe(0);
    for (const table of (JSON.parse(again.stdout) as LoadReport).tables) {
      expect(table).toMatchObject({ inserted: 0, updated: 0 });
    }
    const tables = [
      [
        'signals',
        'signal_id',
        `signal_id, record_id, epoch_ms(detected_at) as detected_at, summary, relevance, highlights`,
      ],
      ['enrich_rows', 'row_key', `row_key, status, signal_count, signal_counts`],
      ['invalid', '"row"', `"row", raw, error`],
    ] as const;
    // PostgreSQL's driver hands jsonb over parsed, DuckDB's a JSON column as its text.
    const normal = (row: Record<string, unknown>, jsonText = false) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [
          k,
          jsonText && typeof v === 'string' && ['highlights', 'signal_counts', 'raw'].includes(k)
            ? JSON.parse(v)
            : typeof v === 'bigint'
              ? Number(v)
              : v,
        ]),
      );
    const pgColumns = (columns: string) =>
      columns.replace('epoch_ms(detected_at)', '(extract(epoch from detected_at) * 1000)::float8');
    const instance = await DuckDBInstance.create(file);
    const duck = await instance.connect();
    try {
      for (const [table, key, columns] of tables) {
        const stored = await query(`select ${pgColumns(columns)} from signal_kit_${table} order by ${key}`);
        const expected = stored.map((row) => normal(row));
        expect(expected.length, table).toBeGreaterThan(0);
        for (const prefix of ['signal_kit_', 'from_lines_', 'from_parquet_']) {
          const read = await duck.runAndReadAll(`select ${columns} from ${prefix}${table} order by ${key}`);
          expect(
            read.getRowObjectsJS().map((row) => normal(row, true)),
            `${prefix}${table}`,
          ).toEqual(expected);
        }
      }
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  });

  it('refuses a Parquet part listed under a table it is not of, naming it, loading nothing', async () => {
    const manifest = JSON.parse(await readFile(join(job.dir, 'parquet', 'load-parquet', '_manifest.json'), 'utf8')) as {
      parts: { key: string; table?: string }[];
    };
    const rowsPart = manifest.parts.find((p) => p.table === 'rows');
    expect(rowsPart).toBeDefined();
    // The signals table's parts are replaced by the rows table's part (its own bytes and sha256, so the check passes).
    manifest.parts = [
      ...manifest.parts.filter((p) => p.table !== 'signals'),
      { ...(rowsPart as { key: string }), table: 'signals' },
    ];
    // Written in the job's own folder (a manifest elsewhere is refused before any part is read), then put back.
    const path = join(job.dir, 'parquet', 'load-parquet', '_manifest.json');
    const original = await readFile(path, 'utf8');
    await writeFile(path, JSON.stringify(manifest));
    const result = await load(pathToFileURL(path).href, '--table-prefix', 'wrong_table_').finally(() =>
      writeFile(path, original),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`ManifestError: manifest ${pathToFileURL(path).href}: part ${rowsPart?.key} has`);
    expect(result.stderr).toContain('not those of the signals table');
    expect(
      await query(`select table_name from information_schema.tables where table_name like 'wrong_table_%'`),
    ).toEqual([]);
  });

  it('names what is wrong: a database URL that is not postgres:// (exit 2), a manifest without its output (exit 1)', async () => {
    const opts = { cwd: job.dir, env: process.env as Record<string, string>, timeout: 30_000 };
    const manifest = manifestOf('lines', 'load-lines');
    for (const into of ['mysql://127.0.0.1/db', 'not a url', '']) {
      const result = await runCli(['load', '--manifest', manifest, '--into', into], opts, 'throw');
      expect(result.code, into).toBe(2);
      expect(result.stderr).toMatch(/--into (must|is required)/);
    }
    const bad = await runCli(['load', '--manifest', manifest, '--into', url, '--table-prefix', 'Bad-'], opts, 'throw');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--table-prefix');

    const path = join(job.dir, 'no-output', '_manifest.json');
    const original = JSON.parse(await readFile(join(job.dir, 'lines', 'load-lines', '_manifest.json'), 'utf8'));
    delete original.output;
    await mkdir(join(job.dir, 'no-output'), { recursive: true });
    await writeFile(path, JSON.stringify(original));
    const missing = await load(pathToFileURL(path).href);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ManifestError');
    expect(missing.stderr).toContain('field "output"');
  });

  it('reads parts only from the folder the manifest lies in, and never shows a byte or hash of any other file', async () => {
    const secret = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n';
    const secretPath = join(job.dir, 'secret.env');
    await writeFile(secretPath, secret);
    const secretSha = createHash('sha256').update(secret).digest('hex');
    const real = JSON.parse(await readFile(join(job.dir, 'lines', 'load-lines', '_manifest.json'), 'utf8')) as Record<
      string,
      unknown
    > & { parts: Record<string, unknown>[] };
    const planted = (output: string, key: string, sha256: string) => ({
      ...real,
      output,
      parts: [{ ...real.parts[0], key, bytes: Buffer.byteLength(secret), sha256 }],
    });
    const dirUrl = pathToFileURL(job.dir).href;
    const cases: [string, string, Record<string, unknown>][] = [
      // Its output names another folder: the secret by its own name there.
      ['elsewhere', join(job.dir, 'planted-a', 'load-lines'), planted(dirUrl, 'secret.env', '0'.repeat(64))],
      // The same with the secret's true hash filled in (learnt elsewhere): still never opened.
      ['elsewhere-hash', join(job.dir, 'planted-b', 'load-lines'), planted(dirUrl, 'secret.env', secretSha)],
      // In its folder, but a part key climbing out of it.
      [
        'traversal',
        join(job.dir, 'planted-c', 'load-lines'),
        planted(pathToFileURL(join(job.dir, 'planted-c')).href, 'load-lines/../../secret.env', secretSha),
      ],
    ];
    for (const [name, folder, manifest] of cases) {
      await mkdir(folder, { recursive: true });
      const path = join(folder, '_manifest.json');
      await writeFile(path, JSON.stringify(manifest));
      const result = await load(pathToFileURL(path).href, '--table-prefix', `planted_${name.replace('-', '_')}_`);
      const said = `${result.stdout}\n${result.stderr}`;
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toContain('ManifestPlaceError');
      expect(said, name).not.toContain(secretSha);
      expect(said, name).not.toContain('AWS_SECRET');
      expect(said, name).not.toContain('wJalrXUtnFEMI');
    }
    // A part in the manifest's own folder holding what is not JSON lines (the secret copied in, its hash filled in):
    // refused by part and line, none of its bytes quoted.
    const own = join(job.dir, 'planted-d', 'load-lines');
    await mkdir(join(own, 'parts'), { recursive: true });
    await writeFile(join(own, 'parts', 'part-00000.jsonl'), secret);
    const inside = planted(
      pathToFileURL(join(job.dir, 'planted-d')).href,
      'load-lines/parts/part-00000.jsonl',
      secretSha,
    );
    await writeFile(join(own, '_manifest.json'), JSON.stringify(inside));
    const result = await load(pathToFileURL(join(own, '_manifest.json')).href, '--table-prefix', 'planted_d_');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('part load-lines/parts/part-00000.jsonl, line 1: not a JSON object');
    expect(`${result.stdout}\n${result.stderr}`).not.toContain('AWS_SECRET');
    expect(await query(`select table_name from information_schema.tables where table_name like 'planted_%'`)).toEqual(
      [],
    );
  });

  it('follows libpq for sslmode: require encrypts without verifying a self-signed server, verify-ca checks the chain only, an unknown mode is refused (exit 2)', async () => {
    const tls = await startPostgres({ ssl: true });
    try {
      const base = await tls.createDatabase('tls');
      const withMode = (query: string) => `${base}?${query}`;
      const encrypted = async (query: string) => {
        const [config] = connectionAttempts(withMode(query));
        const client = new pg.Client(config);
        await client.connect();
        try {
          return (await client.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()'))
            .rows[0]?.ssl;
        } finally {
          await client.end();
        }
      };
      expect(await encrypted('sslmode=require')).toBe(true);
      expect(await encrypted(`sslmode=verify-ca&sslrootcert=${tls.certificate}`)).toBe(true);
      expect(await encrypted('sslmode=disable')).toBe(false);
      // verify-full checks the host name too: the certificate names localhost, the URL 127.0.0.1.
      await expect(encrypted(`sslmode=verify-full&sslrootcert=${tls.certificate}`)).rejects.toThrow(
        /localhost|altnames|IP/,
      );

      // The command loads over TLS with sslmode=require, as the docs show it.
      const loaded = await runCli(
        ['load', '--manifest', manifestOf('lines', 'load-lines'), '--into', withMode('sslmode=require')],
        { cwd: job.dir, env: process.env as Record<string, string>, timeout: 60_000 },
        'throw',
      );
      expect(loaded.stderr).toBe('');
      expect(loaded.code).toBe(0);
      const bogus = await runCli(
        ['load', '--manifest', manifestOf('lines', 'load-lines'), '--into', withMode('sslmode=bogus')],
        { cwd: job.dir, env: process.env as Record<string, string>, timeout: 30_000 },
        'throw',
      );
      expect(bogus.code).toBe(2);
      expect(bogus.stderr).toContain('sslmode=bogus is not one of');
    } finally {
      await tls.stop();
    }
  });

  it('connects through a connection service file as libpq does: host, port, user, password and database from it, the URL winning, the password never in the command line or the output', async () => {
    // A role that must give its password (scram); every other role still trusted as before.
    const password = `svc-${createHash('sha256').update(String(process.pid)).digest('hex').slice(0, 20)}`;
    await db.query(`create role svc_loader login superuser password '${password}'`);
    const hbaFile = (await query<{ hba_file: string }>('show hba_file'))[0]?.hba_file as string;
    const loadedAt = (await query<{ at: string }>('select pg_conf_load_time()::text as at'))[0]?.at;
    await writeFile(hbaFile, `host all svc_loader 127.0.0.1/32 scram-sha-256\n${await readFile(hbaFile, 'utf8')}`);
    await query('select pg_reload_conf()');
    // The server has read the new rules once a new session sees a later load time.
    for (;;) {
      const fresh = new pg.Client({ connectionString: url });
      await fresh.connect();
      const at = (await fresh.query<{ at: string }>('select pg_conf_load_time()::text as at')).rows[0]?.at;
      await fresh.end();
      if (at !== loadedAt) break;
    }
    const { hostname, port } = new URL(url);
    const serviceFile = join(job.dir, 'pg_service.conf');
    const section = (name: string, secret: string, dbname: string) => [
      `[${name}]`,
      `host=${hostname}`,
      `port=${port}`,
      'user=svc_loader',
      `password=${secret}`,
      `dbname=${dbname}`,
    ];
    await writeFile(
      serviceFile,
      [
        '# the warehouse',
        ...section('warehouse', password, 'load'),
        ...section('wrong-password', 'not-the-password', 'load'),
        ...section('other-db', password, 'no_such_database'),
        '',
      ].join('\n'),
    );
    const run = (into: string, prefix: string, env: Record<string, string> = {}) => {
      const args = ['load', '--manifest', manifestOf('lines', 'load-lines'), '--into', into, '--table-prefix', prefix];
      expect(args.join(' ')).not.toContain(password);
      return runCli(
        args,
        {
          cwd: job.dir,
          env: { ...(process.env as Record<string, string>), PGSERVICEFILE: serviceFile, ...env },
          timeout: 60_000,
        },
        'throw',
      );
    };
    const owners = async (prefix: string) =>
      query<{ tableowner: string }>(`select distinct tableowner from pg_tables where tablename like '${prefix}%'`);

    const named = await run('postgresql:///?service=warehouse', 'svc_named_');
    expect(named.stderr).toBe('');
    expect(named.code).toBe(0);
    expect(`${named.stdout}${named.stderr}`).not.toContain(password);
    expect(await owners('svc_named_')).toEqual([{ tableowner: 'svc_loader' }]);
    // PGSERVICE names it when the URL does not; the URL's own database wins over the service's.
    const fromEnv = await run('postgresql:///load', 'svc_env_', { PGSERVICE: 'other-db' });
    expect(fromEnv.stderr).toBe('');
    expect(fromEnv.code).toBe(0);
    expect(await owners('svc_env_')).toEqual([{ tableowner: 'svc_loader' }]);
    // The service's password is the one sent: a wrong one is refused by the server, and not shown either.
    const wrong = await run('postgresql:///?service=wrong-password', 'svc_wrong_');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password authentication failed/);
    expect(`${wrong.stdout}${wrong.stderr}`).not.toContain('not-the-password');
    // A service defined nowhere is a usage mistake, named.
    const unknown = await run('postgresql:///?service=nowhere', 'svc_unknown_');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('definition of service "nowhere" not found');
  });

  it('loads an enrich-contacts job into its own rows table with the person, from its Parquet parts; a reload changes nothing', async () => {
    const profiles = Array.from({ length: 12 }, (_, i) => `https://www.linkedin.com/in/load-person-${i}`);
    const csv = ['Id,LinkedIn Profile', ...profiles.map((url, i) => `c${i},${url}`)].join('\n');
    await writeFile(join(job.dir, 'contacts.csv'), `${csv}\n`);
    const c = job.env.config();
    const output = pathToFileURL(join(job.dir, 'contacts-out')).href;
    const result: JobResult = await job.env.client.workflow.execute('enrichContacts', {
      workflowId: 'load-contacts',
      taskQueue: c.taskQueue,
      args: [
        {
          jobId: 'load-contacts',
          input: pathToFileURL(join(job.dir, 'contacts.csv')).href,
          output,
          options: { limit: 3 },
          formats: ['parquet'],
          taskQueue: c.taskQueue,
          apiTaskQueue: c.apiTaskQueue,
        },
      ],
    });
    expect(result.status).toBe('completed');
    const manifest = `${output}/load-contacts/_manifest.json`;
    const first = await load(manifest, '--table-prefix', 'contacts_');
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as {
      tables: { table: string; rows: number; inserted: number; from: string }[];
    };
    const rowsTable = report.tables.find((t) => t.table === 'contacts_enrich_contacts_rows');
    expect(rowsTable).toMatchObject({ rows: profiles.length, inserted: profiles.length, from: 'table' });
    const rows = await query<{
      record_id: string;
      status: string;
      linkedin_url: string | null;
      full_name: string | null;
    }>('select record_id, status, linkedin_url, full_name from contacts_enrich_contacts_rows order by "row"');
    expect(rows.map((row) => row.record_id)).toEqual(profiles.map((_, i) => `c${i}`));
    const ok = rows.filter((row) => row.status === 'ok');
    expect(ok.length).toBeGreaterThan(0);
    for (const row of ok) {
      expect(row.full_name, row.record_id).toBeTruthy();
      expect(row.linkedin_url, row.record_id).toMatch(/^https:\/\/www\.linkedin\.com\/in\//);
    }
    const again = await load(manifest, '--table-prefix', 'contacts_');
    expect(again.code, again.stderr).toBe(0);
    for (const table of (JSON.parse(again.stdout) as typeof report).tables) {
      expect(table, table.table).toMatchObject({ inserted: 0, updated: 0 });
    }
  });

  it('loads a job whose API answers hold NUL, and whose input did: each NUL as U+FFFD, counted in the report (JSONL and Parquet parts)', async () => {
    const NOTES = ['plain', 'nul\0inside', '\0', 'two\0nul\0s'];
    const csv = ['id,website,note', ...Array.from({ length: 8 }, (_, i) => `n${i},nul${i}.com,${NOTES[i % 4]}`)];
    await writeFile(join(job.dir, 'nul.csv'), `${csv.join('\n')}\n`);
    job.env.sandbox.setFaults({ answerNul: true });
    try {
      for (const format of ['jsonl', 'parquet'] as const) {
        const options = { limit: 5 };
        const manifest = await enrichJob(`load-nul-${format}`, 'nul.csv', {
          options,
          keepColumns: ['note'],
          formats: [format],
        });
        const prefix = `nul_${format}_`;
        const loaded = await load(manifest, '--table-prefix', prefix);
        expect(loaded.code, loaded.stderr).toBe(0);
        const report = JSON.parse(loaded.stdout) as { tables: { table: string; nul_replaced: number }[] };
        const replaced = (table: string) => report.tables.find((t) => t.table === `${prefix}${table}`)?.nul_replaced;
        // The kept column: each NUL of the input as U+FFFD, its row refused by the reader (docs/security.md: NUL is
        // refused in every encoding), so the parts never held it: such rows are in the invalid table, naming the column.
        const notes = await query<{ record_id: string; note: string; error: string | null }>(
          `select record_id, note, null as error, "row" from ${prefix}enrich_rows
           union all select record_id, note, error, "row" from ${prefix}invalid order by "row"`,
        );
        expect(notes.map((row) => row.note)).toEqual(
          csv.slice(1).map((line) => line.split(',')[2]?.replaceAll('\0', '\uFFFD')),
        );
        for (const row of notes) {
          expect(row.error !== null, row.record_id).toBe(row.note.includes('\uFFFD'));
          if (row.error !== null) expect(row.error).toMatch(/column "note" holds a NUL character/);
        }
        // The answers: every signal's summary starts with the stand-in, and data's note holds it.
        const signals = await query<{ summary: string | null; note: string }>(
          `select summary, data->>'sandbox_note' as note from ${prefix}signals`,
        );
        expect(signals.length).toBeGreaterThan(0);
        for (const signal of signals) {
          expect(signal.note).toBe('a\uFFFDb');
          if (signal.summary !== null) expect(signal.summary.startsWith('\uFFFD')).toBe(true);
        }
        // Each table's count is the stand-ins it holds (neither the input nor the sandbox writes U+FFFD otherwise).
        for (const table of ['enrich_rows', 'signals']) {
          const [held] = await query<{ n: number }>(
            `select coalesce(sum(length(t::text) - length(replace(t::text, U&'\\FFFD', ''))), 0)::int as n from ${prefix}${table} t`,
          );
          expect(replaced(table), `${format} ${table}`).toBe(held?.n);
        }
        // The input's stand-ins came with the part: the loader had no NUL of the input to replace.
        expect(replaced('invalid') ?? 0).toBe(0);
        expect(replaced('signals')).toBeGreaterThan(0);
      }
    } finally {
      job.env.sandbox.setFaults({});
    }
  });

  it('loads kept columns whose names PostgreSQL would cut alike (past 63 bytes) under distinct names, by the documented rule', async () => {
    const stem = 'Quarterly pipeline forecast owner, approved by regional leadership';
    const headers = [
      `${stem} (EMEA)`,
      `${stem} (APAC)`,
      `Prévision trimestrielle validée par la direction régionale é`,
    ];
    const csv = ['id,website', ...Array.from({ length: 4 }, (_, i) => `l${i},long${i}.com`)].map(
      (line, i) =>
        `${line},${(i === 0 ? headers : headers.map((h) => `${h.slice(-6)} ${i}`)).map((v) => `"${v}"`).join(',')}`,
    );
    await writeFile(join(job.dir, 'long.csv'), `${csv.join('\n')}\n`);
    const manifest = await enrichJob('load-long', 'long.csv', {
      options: { limit: 2 },
      keepColumns: headers,
      formats: ['jsonl'],
    });
    const loaded = await load(manifest, '--table-prefix', 'long_');
    expect(loaded.code, loaded.stderr).toBe(0);
    // The rule (docs/load.md): cut to 63 bytes at a character's end; a cut already taken is cut shorter and numbered.
    const cut = (name: string, bytes: number) => {
      let out = '';
      for (const ch of name)
        if (Buffer.byteLength(out + ch) <= bytes) out += ch;
        else break;
      return out;
    };
    const expected = [
      cut(headers[0] as string, 63),
      `${cut(headers[1] as string, 61)}_2`,
      cut(headers[2] as string, 63),
    ];
    const names = (
      await query<{ column_name: string }>(
        `select column_name from information_schema.columns where table_name = 'long_enrich_rows' order by ordinal_position`,
      )
    ).map((row) => row.column_name);
    for (const name of expected) expect(names).toContain(name);
    const rows = await query<Record<string, string>>(`select * from long_enrich_rows order by "row"`);
    expect(rows.map((row) => expected.map((name) => row[name]))).toEqual(
      [1, 2, 3, 4].map((i) => headers.map((h) => `${h.slice(-6)} ${i}`)),
    );
  });
});
