/**
 * A scheduled feed created with `--format parquet,csv` (docs/contacts-and-feeds.md), run twice through the CLI with the
 * sandbox's clock moving between the runs. Each run's flat table is read by readers nobody here wrote (DuckDB for the
 * Parquet, Python's csv module for the CSV) and held to the sandbox's truth: every delivered record once, with the
 * values the service answered, and the second run delivering only what is new since the first. Each run is then loaded
 * into a real PostgreSQL with `signal-kit load` (docs/load.md): every delivered record once, the later run's version
 * winning, a reload (or an older run's load after a newer one's) rewriting nothing.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedDir } from '../../activities/feeds/layout.ts';
import type { FeedManifest, FeedResult } from '../../activities/feeds/types.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';
import type { LoadReport } from '../../loader/load.ts';
import { runCli } from '../helpers/cli.ts';
import { useJobEnv } from '../helpers/job-env.ts';
import { jsonSchemaValidator, shippedSchema } from '../helpers/json-schema.ts';
import { runScheduleCli, SCHEDULE_NOW } from '../helpers/schedule-cli.ts';
import type { DuckRow } from '../helpers/tables.ts';
import * as flat from '../helpers/tables.ts';
import { feedKey } from '../promises/feed-oracle.ts';

const DAY = 86_400_000;

/** The columns and the types a user's DuckDB sees, written down from the documented tables, not from the code. */
const COMPANIES_TYPES: Array<[string, string]> = [
  ['key', 'VARCHAR'],
  ['domain', 'VARCHAR'],
  ['name', 'VARCHAR'],
  ['signal_count', 'INTEGER'],
  ['latest_signal_at', 'TIMESTAMP WITH TIME ZONE'],
  ['latest_signal_id', 'VARCHAR'],
  ['industries', 'VARCHAR[]'],
  ['extra', 'JSON'],
];

const CONTACTS_TYPES: Array<[string, string]> = [
  ['key', 'VARCHAR'],
  ['topic_id', 'VARCHAR'],
  ['intent_score', 'DOUBLE'],
  ...[
    'first_name',
    'last_name',
    'full_name',
    'email',
    'email_validation_status',
    'job_title',
    'linkedin_url',
    'mobile_phone',
    'seniority',
    'department',
    'city',
    'state',
    'country',
    'company_name',
    'company_domain',
    'company_linkedin_url',
    'company_industry',
  ].map((name): [string, string] => [name, 'VARCHAR']),
  ['signal_count', 'INTEGER'],
  ['latest_signal_at', 'TIMESTAMP WITH TIME ZONE'],
  ['latest_signal_id', 'VARCHAR'],
  ['extra', 'JSON'],
];

type Item = Record<string, unknown>;
const iso = (value: unknown) => new Date(Date.parse(String(value))).toISOString();

describe('a scheduled feed with --format parquet,csv', () => {
  let now = SCHEDULE_NOW;
  const ctx = useJobEnv('feed-tables', {
    // A share of each topic's intent contacts surfaces over the 40 days after the first run: the second has new ones.
    sandbox: { seed: 5, clock: () => now, intentSurfacing: { from: SCHEDULE_NOW - DAY, days: 40, share: 0.4 } },
  });
  let duck: Awaited<ReturnType<typeof flat.openDuck>>;
  let server: PostgresServer;
  const dbs: pg.Client[] = [];
  beforeAll(async () => {
    await ctx.env.startWorker();
    duck = await flat.openDuck();
    server = await startPostgres();
  });
  afterAll(async () => {
    duck?.close();
    for (const db of dbs) await db.end();
    await server?.stop();
  });

  /** A database of its own, and `signal-kit load` into it as a user runs it (the CLI in a child process). */
  async function warehouse(name: string) {
    const url = await server.createDatabase(name);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    dbs.push(db);
    const opts = { cwd: ctx.dir, env: process.env as Record<string, string>, timeout: 60_000 };
    const run = (manifestUrl: string) => runCli(['load', '--manifest', manifestUrl, '--into', url], opts, 'throw');
    const load = async (manifestUrl: string) => {
      const result = await run(manifestUrl);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as LoadReport).tables;
    };
    /** The table's rows by key, each with its row version (xmin): a load that rewrites nothing leaves it as it was. */
    const rows = async (table: string) => {
      const { rows } = await db.query<Item>(`select xmin::text as version, * from ${table} order by key`);
      return new Map(rows.map((row) => [String(row['key']), row]));
    };
    return { run, load, rows, db };
  }

  /**
   * Loads run 1 then run 2, checking the table after each against what the runs delivered (the later run's version
   * of a key winning); then reloads run 2 and run 1 again: not a row is rewritten.
   */
  async function loadRuns(
    { database, table, format }: { database: string; table: string; format: 'jsonl' | 'parquet' },
    runs: Array<{ url: string; delivered: Map<string, Item> }>,
    expectRow: (row: Item, item: Item, key: string) => void,
  ) {
    const db = await warehouse(database);
    const latest = new Map<string, Item>();
    for (const run of runs) {
      const [report, ...others] = await db.load(run.url);
      expect(others).toEqual([]);
      const again = [...run.delivered.keys()].filter((key) => latest.has(key)).length;
      expect(report).toMatchObject({
        table,
        from: 'table',
        format,
        rows: run.delivered.size,
        inserted: run.delivered.size - again,
        updated: again,
      });
      for (const [key, item] of run.delivered) latest.set(key, { ...item, manifest: run.url });
      const stored = await db.rows(table);
      expect([...stored.keys()].sort()).toEqual([...latest.keys()].sort());
      for (const [key, item] of latest) {
        const row = stored.get(key) as Item;
        expect(row['source_manifest'], key).toBe(item['manifest']);
        expectRow(row, item, key);
      }
    }
    const before = await db.rows(table);
    for (const run of [...runs].reverse()) {
      const [report] = await db.load(run.url);
      expect(report).toMatchObject({ rows: run.delivered.size, inserted: 0, updated: 0 });
      expect(await db.rows(table)).toEqual(before);
    }
    return { latest, rows: before };
  }

  const cli = <T = unknown>(...argv: string[]) =>
    runScheduleCli<T>({ client: ctx.env.client, temporal: ctx.env.config() }, argv);

  /** One `schedule run --wait`: its manifest (checked by the shipped schema) and its lines. */
  async function runOnce(name: string, kind: FeedKind) {
    const run = await cli<FeedResult>('run', name, '--wait');
    expect(run.code, JSON.stringify(run.out)).toBe(0);
    const prefix = join(ctx.dir, 'out', name, feedDir(kind), `dt=${run.out.dt}`, `run-${run.out.runId}`);
    const manifest = JSON.parse(await readFile(join(prefix, '_manifest.json'), 'utf8')) as FeedManifest;
    const validate = jsonSchemaValidator().compile(await shippedSchema('feed-manifest.schema.json'));
    expect(validate(manifest), JSON.stringify(validate.errors)).toBe(true);
    expect(manifest.output).toBe(pathToFileURL(join(ctx.dir, 'out')).href);
    expect(manifest.incomplete).toEqual([]);
    const lines: Item[] = [];
    for (const part of manifest.parts.filter((p) => p.table === 'lines')) {
      lines.push(...flat.jsonlObjects(await readFile(join(ctx.dir, 'out', part.key)), true));
    }
    return { manifest, lines, url: run.out.manifestUrl };
  }

  /**
   * The run's table parts in each format: one per lines part with as many rows, each file of the recorded size and
   * sha256; the Parquet read by DuckDB and the CSV by Python, both giving the same rows.
   */
  async function readTables(manifest: FeedManifest, table: string, types: Array<[string, string]>) {
    const lineParts = manifest.parts.filter((p) => p.table === 'lines');
    const files: Record<string, string[]> = {};
    for (const format of ['parquet', 'csv']) {
      const parts = manifest.parts.filter((p) => p.table === table && p.format === format);
      expect(parts.map((p) => p.lines)).toEqual(lineParts.map((p) => p.lines));
      files[format] = [];
      for (const part of parts) {
        expect(part.key).toMatch(new RegExp(`/tables/${table}/part-\\d{5}\\.${format}$`));
        const bytes = await readFile(join(ctx.dir, 'out', part.key));
        expect(bytes.length).toBe(part.bytes);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(part.sha256);
        files[format]?.push(join(ctx.dir, 'out', part.key));
      }
    }
    expect(manifest.parts.filter((p) => p.table !== 'lines' && p.table !== table)).toEqual([]);
    const from = `read_parquet([${(files['parquet'] ?? []).map(flat.sqlString).join(', ')}], union_by_name=false, hive_partitioning=false)`;
    expect(await flat.describe(duck, from)).toEqual(types);
    const parquet = await flat.readParquetRows(duck, from, types);
    const csv: DuckRow[] = [];
    for (const file of files['csv'] ?? []) {
      const [header, ...rows] = await flat.readCsvWithPython(file);
      expect(header).toEqual(types.map(([name]) => name));
      for (const cells of rows) csv.push(Object.fromEntries(cells.map((cell, i) => [header?.[i], cell])));
    }
    // The CSV holds the same values as text (documented: lists and JSON as JSON text, times ISO 8601, null empty).
    expect(csv).toEqual(parquet.map((row) => csvOf(row, types)));
    return parquet;
  }

  it('company-search: each run writes its companies table, every delivered company once as the service answered it', async () => {
    const name = 'software-tables';
    const filters = { industries: ['Computer Software'], signal_types: ['news'] };
    const since = new Date(now - 10 * DAY).toISOString();
    const created = await cli(
      'create',
      ...['--name', name, '--kind', 'company-search', '--industries', 'Computer Software'],
      ...['--signal-types', 'news', '--since', since, '--format', 'parquet,csv'],
      ...['--output', pathToFileURL(join(ctx.dir, 'out')).href, '--every', '1d', '--paused'],
    );
    expect(created.code).toBe(0);

    const delivered = new Map<string, string>();
    const runs: Array<{ url: string; delivered: Map<string, Item> }> = [];
    // 20 days apart: long enough for a company of the first run to have a newer matching signal by the second.
    for (const step of [0, 20]) {
      now = SCHEDULE_NOW + step * DAY;
      const { manifest, lines, url } = await runOnce(name, 'company-search');
      // What the service answers this run's question (its lower bound) with, uncapped: the sandbox's truth.
      const truth = ctx.env.sandbox.truth.companySearch({ ...filters, detected_after: manifest.detected_after });
      expect(truth.length).toBeLessThan(100); // one call answers it: each line is the item as answered
      const expected = truth.filter((item) => delivered.get(`domain:${item.domain}`) !== item.latest_signal_id);
      expect(expected.length).toBeGreaterThan(0);
      expect(lines).toHaveLength(expected.length);

      const rows = await readTables(manifest, 'companies', COMPANIES_TYPES);
      expect(rows).toHaveLength(expected.length);
      expect(new Set(rows.map((row) => row['key'])).size).toBe(rows.length);
      const byKey = new Map(rows.map((row) => [String(row['key']), row]));
      for (const item of expected) {
        const row = byKey.get(`domain:${item.domain}`);
        expect(row, item.domain).toEqual({
          key: `domain:${item.domain}`,
          domain: item.domain,
          name: item.name,
          signal_count: item.signal_count,
          latest_signal_at: iso(item.latest_signal_at),
          latest_signal_id: item.latest_signal_id,
          industries: item.industries,
          extra: '{}',
        });
      }
      for (const item of expected) delivered.set(`domain:${item.domain}`, item.latest_signal_id);
      runs.push({
        url,
        delivered: new Map(expected.map((item) => [`domain:${item.domain}`, item as unknown as Item])),
      });
    }
    // One company comes again in the second run with a newer signal: its row is the one load must replace.
    expect([...(runs[1]?.delivered.keys() ?? [])].filter((key) => runs[0]?.delivered.has(key))).toHaveLength(1);
    // Over both runs, every company matching since the feed's start was delivered with its newest matching signal.
    const all = ctx.env.sandbox.truth.companySearch({ ...filters, detected_after: since });
    expect(new Map(all.map((item) => [`domain:${item.domain}`, item.latest_signal_id]))).toEqual(delivered);

    // Loaded into PostgreSQL (from the Parquet parts), every company once with its newest matching signal.
    const companies = { database: 'companies', table: 'signal_kit_companies', format: 'parquet' } as const;
    const { latest: loaded } = await loadRuns(companies, runs, (row, item, key) => {
      expect(row, key).toMatchObject({
        domain: item['domain'],
        name: item['name'],
        signal_count: item['signal_count'],
        latest_signal_id: item['latest_signal_id'],
        industries: item['industries'],
        extra: {},
      });
      expect((row['latest_signal_at'] as Date).toISOString()).toBe(iso(item['latest_signal_at']));
    });
    expect(new Map([...loaded].map(([key, item]) => [key, item['latest_signal_id']]))).toEqual(delivered);
  });

  it('contact-search: the contacts table holds each person once per newest matching signal, as the service answered', async () => {
    const name = 'cxo-tables';
    const filters = { seniority: ['Cxo'] };
    const since = new Date(now - 10 * DAY).toISOString();
    const created = await cli(
      'create',
      ...[
        '--name',
        name,
        '--kind',
        'contact-search',
        '--seniority',
        'Cxo',
        '--since',
        since,
        '--format',
        'parquet,csv,jsonl',
      ],
      ...['--output', pathToFileURL(join(ctx.dir, 'out')).href, '--every', '1d', '--paused'],
    );
    expect(created.code).toBe(0);
    const delivered = new Map<string, string>();
    const runs: Array<{ url: string; delivered: Map<string, Item> }> = [];
    for (const step of [0, 4]) {
      now += step * DAY;
      const { manifest, lines, url } = await runOnce(name, 'contact-search');
      const truth = ctx.env.sandbox.truth.contactSearch({
        ...filters,
        detected_after: manifest.detected_after,
      }) as unknown as Item[];
      expect(truth.length).toBeLessThan(100); // one call answers it
      const expected = truth.filter(
        (item) => delivered.get(feedKey('contact-search', item)) !== item['latest_signal_id'],
      );
      expect(expected.length).toBeGreaterThan(0);
      const rows = await readTables(manifest, 'contacts', CONTACTS_TYPES);
      expect(rows).toHaveLength(expected.length);
      const byKey = new Map(rows.map((row) => [String(row['key']), row]));
      const lineByKey = new Map(lines.map(({ key, ...line }) => [String(key), line]));
      for (const item of expected) {
        const key = feedKey('contact-search', item);
        const row = byKey.get(key) as DuckRow;
        expect(row, key).toMatchObject({ ...searchedContact(item), latest_signal_at: iso(item['latest_signal_at']) });
        const line = withoutNulls(lineByKey.get(key) as Item);
        expect(rebuilt(row)).toEqual({ ...line, latest_signal_at: iso(line['latest_signal_at']) });
        delivered.set(key, String(item['latest_signal_id']));
      }
      runs.push({ url, delivered: new Map(expected.map((item) => [feedKey('contact-search', item), item])) });
    }

    // Loaded into PostgreSQL (from the JSONL table parts), every person once with their newest matching signal.
    const contacts = { database: 'contacts', table: 'signal_kit_contacts', format: 'jsonl' } as const;
    const { latest: loaded } = await loadRuns(contacts, runs, (row, item, key) => {
      expect(row, key).toMatchObject(searchedContact(item));
      expect((row['latest_signal_at'] as Date).toISOString()).toBe(iso(item['latest_signal_at']));
    });
    expect(new Map([...loaded].map(([key, item]) => [key, item['latest_signal_id']]))).toEqual(delivered);
  });

  it('intent-contacts: the contacts table holds each new person per topic once, the second run only the new ones', async () => {
    const name = 'intent-tables';
    const topics = ['b2b_17', 'b2b_4242'];
    const created = await cli(
      'create',
      ...['--name', name, '--kind', 'intent-contacts', '--topics', topics.join(','), '--format', 'csv,parquet'],
      ...['--output', pathToFileURL(join(ctx.dir, 'out')).href, '--every', '1d', '--paused'],
    );
    expect(created.code).toBe(0);
    const delivered = new Set<string>();
    const runs: Array<{ url: string; delivered: Map<string, Item> }> = [];
    const start = now;
    for (const step of [0, 30]) {
      now = start + step * DAY;
      const { manifest, lines, url } = await runOnce(name, 'intent-contacts');
      const lineByKey = new Map(lines.map(({ key, ...line }) => [String(key), line]));
      const truth = ctx.env.sandbox.truth.intentContacts({ topic_ids: topics }) as unknown as Item[];
      // One person per topic: of two items the feed tells apart by nothing (no email, no profile, the same name at
      // the same employer), the first in page order.
      const expected = new Map<string, Item>();
      for (const item of truth) {
        const key = feedKey('intent-contacts', item);
        if (!delivered.has(key) && !expected.has(key)) expected.set(key, item);
      }
      expect(expected.size).toBeGreaterThan(0);
      const rows = await readTables(manifest, 'contacts', CONTACTS_TYPES);
      expect(rows).toHaveLength(expected.size);
      const byKey = new Map(rows.map((row) => [String(row['key']), row]));
      expect(byKey.size).toBe(rows.length);
      for (const [key, item] of expected) {
        const contact = item['contact'] as Item;
        const company = item['company'] as Item;
        const row = byKey.get(key);
        expect(row, key).toMatchObject({
          topic_id: item['topic_id'],
          intent_score: item['intent_score'],
          first_name: contact['first_name'] ?? null,
          last_name: contact['last_name'] ?? null,
          email: contact['email'] ?? null,
          email_validation_status: contact['email_validation_status'] ?? null,
          linkedin_url: contact['linkedin_url'] ?? null,
          mobile_phone: contact['mobile_phone'] ?? null,
          seniority: contact['seniority'] ?? null,
          company_name: company['name'],
          company_domain: company['domain'],
          company_industry: company['industry'] ?? null,
          signal_count: null,
        });
        // Nothing of the line is lost: the columns and extra (what has no column, such as the employer's size and
        // revenue buckets) put back together give the delivered line (a null field is a null column, as documented).
        expect(rebuilt(row as DuckRow)).toEqual(withoutNulls(lineByKey.get(key) as Item));
        delivered.add(key);
      }
      runs.push({ url, delivered: expected });
    }

    // Loaded into PostgreSQL (from the Parquet parts), every person once per topic.
    const contacts = { database: 'intent', table: 'signal_kit_contacts', format: 'parquet' } as const;
    const { latest: loaded, rows: fromTable } = await loadRuns(contacts, runs, (row, item, key) => {
      expect(row, key).toMatchObject({
        topic_id: item['topic_id'],
        intent_score: item['intent_score'],
        email: (item['contact'] as Item)['email'] ?? null,
        company_domain: (item['company'] as Item)['domain'],
        signal_count: null,
      });
    });
    expect(new Set(loaded.keys())).toEqual(delivered);

    // A run that wrote no flat table loads the same rows from its lines: each manifest without its table parts (a
    // copy beside the run's own, since a manifest's parts are read only from the folder it lies in).
    const fromLines = await warehouse('intent_lines');
    for (const [i, run] of runs.entries()) {
      const manifest = JSON.parse(await readFile(fileURLToPath(run.url), 'utf8')) as FeedManifest;
      manifest.parts = manifest.parts.filter((part) => part.table === 'lines');
      const copy = join(dirname(fileURLToPath(run.url)), `_manifest-lines-only-${i}.json`);
      await writeFile(copy, JSON.stringify(manifest));
      const [report] = await fromLines.load(pathToFileURL(copy).href);
      expect(report).toMatchObject({ from: 'lines', rows: run.delivered.size, inserted: run.delivered.size });
    }
    const withoutProvenance = (rows: Map<string, Item>) =>
      [...rows.values()].map(({ version, source_manifest, ...row }) => row);
    expect(withoutProvenance(await fromLines.rows('signal_kit_contacts'))).toEqual(withoutProvenance(fromTable));

    // A table part whose bytes are not the ones its manifest names is refused by name, and nothing is loaded.
    const tampered = JSON.parse(await readFile(fileURLToPath(runs[0]?.url as string), 'utf8')) as FeedManifest;
    const part = tampered.parts.find(
      (p) => p.table === 'contacts' && p.format === 'parquet',
    ) as FeedManifest['parts'][number];
    part.sha256 = createHash('sha256').update('not the part').digest('hex');
    const tamperedPath = join(dirname(fileURLToPath(runs[0]?.url as string)), '_manifest-tampered.json');
    await writeFile(tamperedPath, JSON.stringify(tampered));
    const bad = await warehouse('intent_tampered');
    const refused = await bad.run(pathToFileURL(tamperedPath).href);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`PartChecksumError: part ${part.key} does not match its manifest`);
    expect(
      (await bad.db.query(`select * from information_schema.tables where table_name like 'signal_kit_%'`)).rows,
    ).toEqual([]);
  });
});

/** The columns of a contact-search item's row that the test checks (all but `latest_signal_at`, a time). */
function searchedContact(item: Item): Item {
  const contact = item['contact'] as Item;
  return {
    email: contact['email'] ?? null,
    full_name: contact['full_name'] ?? null,
    job_title: contact['job_title'] ?? null,
    seniority: contact['seniority'] ?? null,
    company_domain: (item['company'] as Item)['domain'],
    topic_id: null,
    signal_count: item['signal_count'],
    latest_signal_id: item['latest_signal_id'],
  };
}

/** A contacts row put back into the item it was made from: the person's and employer's columns nested again. */
function rebuilt(row: DuckRow): Item {
  const item = JSON.parse(String(row['extra'])) as Item;
  const contact = { ...((item['contact'] as Item | undefined) ?? {}) };
  const company = { ...((item['company'] as Item | undefined) ?? {}) };
  for (const [name] of CONTACTS_TYPES) {
    const value = row[name];
    if (value === null || value === undefined || name === 'key' || name === 'extra') continue;
    if (name.startsWith('company_')) company[name.slice('company_'.length)] = value;
    else if (['topic_id', 'intent_score', 'signal_count', 'latest_signal_at', 'latest_signal_id'].includes(name))
      item[name] = value;
    else contact[name] = value;
  }
  return { ...item, contact, company };
}

/** The item without its null fields (nested objects' too): a null column and an absent field read alike. */
function withoutNulls(item: Item): Item {
  const out: Item = {};
  for (const [name, value] of Object.entries(item)) {
    if (value === null) continue;
    out[name] = typeof value === 'object' && !Array.isArray(value) ? withoutNulls(value as Item) : value;
  }
  return out;
}

/** A DuckDB row as the documented CSV writes it: empty for null, JSON text for lists, the rest as text. */
function csvOf(row: DuckRow, types: Array<[string, string]>): DuckRow {
  return Object.fromEntries(
    types.map(([name, type]) => {
      const value = row[name];
      if (value === null || value === undefined) return [name, ''];
      if (type.endsWith('[]')) return [name, JSON.stringify(value)];
      const text = String(value);
      return [name, type === 'VARCHAR' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text];
    }),
  );
}
