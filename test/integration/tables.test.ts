/**
 * The flat tables of a real job (docs/tables.md), read by readers nobody here wrote: every Parquet part by DuckDB,
 * every CSV part by Python's csv module. Each is held to the job's own output lines (the nested JSONL) and to its
 * JSONL twin, value by value and type by type, and every part of a table has one schema.
 */

import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../activities/jobs/types.ts';
import { openStore } from '../../config/storage.ts';
import type { ContactObject } from '../../sandbox/data/contacts.ts';
import { SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { BulkEnrichInput } from '../../workflows/bulk-enrich.ts';
import type { VerifyEmailsInput } from '../../workflows/verify-emails.ts';
import { readJobOutput } from '../helpers/output.ts';
import {
  type DuckRow,
  describe as describeColumns,
  jsonlObjects,
  openDuck,
  readCsvWithPython,
  readParquetRows,
  sqlString,
} from '../helpers/tables.ts';
import { runJob } from '../promises/helpers.ts';
import { readPushRun, runPush } from '../promises/push-helpers.ts';

const CLOCK = SANDBOX_EPOCH_MS + 120 * 86_400_000;
const DOMAINS = 150;
const JUNK = ['', 'n/a', 'not a website'];
/** Rows repeating another row's website (in other spellings), and rows naming their company only. */
const REPEATS = ['TABLES3.COM', 'https://www.tables4.com/about', 'tables3.com.'];
const NAMED = ['Tables Name One Inc', 'Tables Name Two GmbH'];

/** The types a user's DuckDB sees, written down from the documented table (docs/tables.md), not from the code. */
const SIGNALS_TYPES: Array<[string, string]> = [
  ['signal_id', 'VARCHAR'],
  ['record_id', 'VARCHAR'],
  ['row', 'INTEGER'],
  ['domain', 'VARCHAR'],
  ['signal_type', 'VARCHAR'],
  ['signal_subtype', 'VARCHAR'],
  ['signal_name', 'VARCHAR'],
  ['association', 'VARCHAR'],
  ['detected_at', 'TIMESTAMP WITH TIME ZONE'],
  ['company_name', 'VARCHAR'],
  ['company_domain', 'VARCHAR'],
  ['summary', 'VARCHAR'],
  ['detail', 'VARCHAR'],
  ['evidence', 'VARCHAR'],
  ['impact_rationale', 'VARCHAR'],
  ['source_url', 'VARCHAR'],
  ['relevance', 'DOUBLE'],
  ['sentiment', 'VARCHAR'],
  ['confidence', 'VARCHAR'],
  ['sales_relevance', 'VARCHAR'],
  ['signal_category', 'VARCHAR'],
  ['filing_date', 'DATE'],
  ['filing_year', 'INTEGER'],
  ['fiscal_year', 'INTEGER'],
  ['highlights', 'VARCHAR[]'],
  ['trending_titles', 'VARCHAR[]'],
  ['vendors_mentioned', 'VARCHAR[]'],
  ['metrics_timeframe', 'VARCHAR'],
  ['metrics_dollar_context', 'VARCHAR'],
  ['metrics_dollar_millions', 'DOUBLE'],
  ['data', 'JSON'],
];

const SIGNAL_TYPES = [
  'news',
  'hiring_trends',
  'hiring_velocity',
  'linkedin_post_company',
  'linkedin_post_contact',
  'linkedin_posts',
  'work_milestones',
  'sec_10k',
  'sec_10q',
  'sec_8k',
  'sec_6k',
  'sec_20f',
  'website_intelligence',
];

const ENRICH_ROWS_TYPES: Array<[string, string]> = [
  ['record_id', 'VARCHAR'],
  ['row', 'INTEGER'],
  ['status', 'VARCHAR'],
  ['matched_by', 'VARCHAR'],
  ['input', 'VARCHAR'],
  ['domain', 'VARCHAR'],
  ['company_name', 'VARCHAR'],
  ['company_domain', 'VARCHAR'],
  ['company_linkedin_url', 'VARCHAR'],
  ['signal_count', 'INTEGER'],
  ...SIGNAL_TYPES.map((type): [string, string] => [`signals_${type}`, 'INTEGER']),
  ['signals_other', 'INTEGER'],
  ['signal_counts', 'JSON'],
  ['latest_signal_at', 'TIMESTAMP WITH TIME ZONE'],
  ['latest_signal_type', 'VARCHAR'],
  ['latest_signal_summary', 'VARCHAR'],
  ['duplicate_of', 'INTEGER'],
  ['answer_status', 'VARCHAR'],
  ['error_code', 'VARCHAR'],
  ['error_message', 'VARCHAR'],
];

const INVALID_TYPES: Array<[string, string]> = [
  ['record_id', 'VARCHAR'],
  ['row', 'INTEGER'],
  ['raw', 'JSON'],
  ['error', 'VARCHAR'],
];

/** A kept input column (`keepColumns`): a string column of its own, under the input's name, after the table's. */
const KEPT = 'Account Name';
const KEPT_ROWS_TYPES: Array<[string, string]> = [...ENRICH_ROWS_TYPES, [KEPT, 'VARCHAR']];
const KEPT_INVALID_TYPES: Array<[string, string]> = [...INVALID_TYPES, [KEPT, 'VARCHAR']];

/** The enrichment columns of a Salesforce export's rows.csv, written down from docs/crm-round-trip.md. */
const SALESFORCE_ENRICH_FIELDS = [
  'Signal_Row__c',
  'Signal_Status__c',
  'Signal_Matched_By__c',
  'Signal_Input__c',
  'Signal_Domain__c',
  'Signal_Company_Name__c',
  'Signal_Company_Domain__c',
  'Signal_Company_Linkedin_Url__c',
  'Signal_Count__c',
  'Signals_News__c',
  'Signals_Hiring_Trends__c',
  'Signals_Hiring_Velocity__c',
  'Signals_Linkedin_Post_Company__c',
  'Signals_Linkedin_Post_Contact__c',
  'Signals_Linkedin_Posts__c',
  'Signals_Work_Milestones__c',
  'Signals_Sec_10k__c',
  'Signals_Sec_10q__c',
  'Signals_Sec_8k__c',
  'Signals_Sec_6k__c',
  'Signals_Sec_20f__c',
  'Signals_Website_Intelligence__c',
  'Signals_Other__c',
  'Signal_Counts__c',
  'Signal_Latest_Signal_At__c',
  'Signal_Latest_Signal_Type__c',
  'Signal_Latest_Signal_Summary__c',
  'Signal_Duplicate_Of__c',
  'Signal_Answer_Status__c',
  'Signal_Error_Code__c',
  'Signal_Error_Message__c',
];

/** The person's columns of a contacts rows table (docs/tables.md). */
const PERSON_COLUMNS = 'first_name last_name full_name email job_title linkedin_url city state country'.split(
  ' ',
) as (keyof ContactObject)[];

type Line = Record<string, unknown>;
type Signal = { signal_id: string; signal_type: string; detected_at: string; data: Record<string, unknown> } & Line;

describe('flat tables of a real job, read by DuckDB and Python', () => {
  let env: JobEnv;
  let dir: string;
  let duck: Awaited<ReturnType<typeof openDuck>>;

  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 11, clock: () => CLOCK } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-tables-'));
    duck = await openDuck();
  });
  afterAll(async () => {
    duck?.close();
    await env?.stop();
  });

  const run = <T>(workflow: string, input: T & { jobId: string }) => runJob<T>(env, workflow, input);

  /** Runs a CRM job on `<dir>/<file>` with its output under `<dir>/<folder>`: the result and that folder's path and URL. */
  async function runOnFile(
    workflow: 'bulkEnrich' | 'enrichContacts',
    file: string,
    folder: string,
    input: Omit<BulkEnrichInput, 'input' | 'output'>,
  ) {
    const root = join(dir, folder);
    const output = pathToFileURL(root).href;
    const result = await run<BulkEnrichInput>(workflow, {
      ...input,
      input: pathToFileURL(join(dir, file)).href,
      output,
    });
    return { root, output, result };
  }

  /** The manifest's table parts, each checked against the bytes in the bucket (size and sha256). */
  async function tableParts(root: string, manifest: Manifest, table: string, format: string) {
    const parts = manifest.parts.filter((part) => part.table === table && part.format === format);
    for (const part of parts) {
      const bytes = await readFile(join(root, part.key));
      expect(bytes.length, part.key).toBe(part.bytes);
      expect(createHash('sha256').update(bytes).digest('hex'), part.key).toBe(part.sha256);
    }
    return parts;
  }

  it('enrich: every line and signal is in the Parquet, CSV and JSONL tables with the same values and types', async () => {
    const rows = ['Id,Account Name,Website'];
    for (let i = 0; i < DOMAINS; i++) rows.push(`${i},Company ${i},tables${i}.com`);
    for (const [i, repeat] of REPEATS.entries()) rows.push(`r${i},Again ${i},${repeat}`);
    for (const [i, name] of NAMED.entries()) rows.push(`n${i},${name},`);
    for (const [i, junk] of JUNK.entries()) rows.push(`j${i},,"${junk}"`);
    await writeFile(join(dir, 'crm.csv'), `${rows.join('\n')}\n`);
    const { root, output, result } = await runOnFile('bulkEnrich', 'crm.csv', 'enrich', {
      jobId: 'crm-tables',
      options: { limit: 5 },
      keepColumns: [KEPT],
      formats: ['jsonl', 'csv', 'parquet'],
    });
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, 'crm-tables');
    const answered = lines.filter((line) => line['status'] !== 'invalid');
    const invalid = lines.filter((line) => line['status'] === 'invalid');
    // Every input row has its line, duplicates and name-only rows included, under its own record id.
    expect(answered).toHaveLength(DOMAINS + REPEATS.length + NAMED.length);
    expect(answered.filter((line) => line['status'] === 'duplicate')).toHaveLength(REPEATS.length);
    expect(invalid).toHaveLength(JUNK.length);
    const signals = answered.flatMap((line) => (line['signals'] as Signal[] | undefined) ?? []);
    expect(signals.length).toBeGreaterThan(100);

    // One table part per lines part and format, named as it, with as many rows as it has lines.
    const lineParts = manifest.parts.filter((part) => part.table === 'lines');
    const nameOf = (key: string) => key.slice(key.lastIndexOf('/') + 1).replace(/\..*$/, '');
    for (const format of ['jsonl', 'csv', 'parquet']) {
      const rowsParts = await tableParts(root, manifest, 'rows', format);
      const invalidParts = await tableParts(root, manifest, 'invalid', format);
      expect([...rowsParts, ...invalidParts].map((p) => [nameOf(p.key), p.lines]).sort()).toEqual(
        lineParts.map((p) => [nameOf(p.key), p.lines]).sort(),
      );
      const signalParts = await tableParts(root, manifest, 'signals', format);
      expect(signalParts.reduce((n, p) => n + p.lines, 0)).toBe(signals.length);
    }

    // Parquet: every part of a table has one schema, the documented one; a union of the parts reads as one table.
    const tables = join(root, 'crm-tables', 'tables');
    const glob = (table: string) => sqlString(join(tables, table, '*.parquet'));
    for (const [table, types] of [
      ['signals', SIGNALS_TYPES],
      ['rows', KEPT_ROWS_TYPES],
    ] as const) {
      const from = `read_parquet(${glob(table)}, union_by_name=false)`;
      expect(await describeColumns(duck, from)).toEqual(types);
      const perFile = await duck.query(
        `SELECT file_name, list(name || ':' || type || ':' || coalesce(logical_type, '') ORDER BY name) AS s
         FROM parquet_schema(${glob(table)}) GROUP BY file_name`,
      );
      expect(perFile.length).toBeGreaterThan(2);
      expect(new Set(perFile.map((file) => JSON.stringify(file['s']))).size).toBe(1);
    }

    // Every signal of every line, once, with its own values.
    const parquetSignals = await readParquetRows(
      duck,
      `read_parquet(${glob('signals')}, union_by_name=false)`,
      SIGNALS_TYPES,
    );
    expect(parquetSignals).toHaveLength(signals.length);
    const byId = new Map(parquetSignals.map((row) => [String(row['signal_id']), row]));
    expect(byId.size).toBe(signals.length);
    for (const line of answered) {
      for (const signal of (line['signals'] as Signal[] | undefined) ?? []) {
        const row = byId.get(signal.signal_id);
        expect(row, signal.signal_id).toBeDefined();
        expectSignalRow(row as DuckRow, signal, line);
      }
    }

    // Every answered line has its row, with its counts and its newest signal.
    const parquetRows = await readParquetRows(
      duck,
      `read_parquet(${glob('rows')}, union_by_name=false) ORDER BY "row"`,
      KEPT_ROWS_TYPES,
    );
    expect(parquetRows.map((row) => row['row'])).toEqual(
      answered.map((line) => line['row']).sort((a, b) => Number(a) - Number(b)),
    );
    const rowByRow = new Map(parquetRows.map((row) => [row['row'], row]));
    for (const line of answered) expectRowsRow(rowByRow.get(line['row']) as DuckRow, line);

    // LinkedIn company URLs are absolute, though the service sends some as `/company/<name>`.
    const linkedin = await duck.query(
      `SELECT count(company_linkedin_url)::INTEGER AS urls,
              count(*) FILTER (WHERE company_linkedin_url NOT LIKE 'https://www.linkedin.com/company/%')::INTEGER AS relative
       FROM read_parquet(${glob('rows')}, union_by_name=false)`,
    );
    expect(linkedin[0]?.['urls']).toBeGreaterThan(50);
    expect(linkedin[0]?.['relative']).toBe(0);

    // The JSONL twin holds the same rows, value for value, with JSON's types (numbers, strings, arrays, null).
    for (const table of ['rows', 'signals'] as const) {
      const types = table === 'rows' ? KEPT_ROWS_TYPES : SIGNALS_TYPES;
      for (const part of manifest.parts.filter((p) => p.table === table && p.format === 'jsonl')) {
        const twin = jsonlObjects(await readFile(join(root, part.key)), part.key.endsWith('.gz'));
        const parquet = await readParquetRows(
          duck,
          `read_parquet(${sqlString(join(root, part.key.replace(/\.jsonl(\.gz)?$/, '.parquet')))})`,
          types,
        );
        expect(twin.map((row) => Object.keys(row))).toEqual(twin.map(() => types.map(([name]) => name)));
        expect(parquet).toEqual(twin);
      }
    }

    // CSV, read by Python: the header is the table's columns and each row is its JSONL twin's row, cell by cell.
    for (const table of ['rows', 'signals', 'invalid'] as const) {
      for (const part of manifest.parts.filter((p) => p.table === table && p.format === 'csv')) {
        const [header, ...cells] = await readCsvWithPython(join(root, part.key));
        const twinKey = manifest.parts.find(
          (p) => p.table === table && p.format === 'jsonl' && p.key.startsWith(part.key.replace(/\.csv$/, '.')),
        )?.key;
        const twin = jsonlObjects(await readFile(join(root, String(twinKey))), String(twinKey).endsWith('.gz'));
        expect(cells).toHaveLength(twin.length);
        const names = { rows: KEPT_ROWS_TYPES, signals: SIGNALS_TYPES, invalid: KEPT_INVALID_TYPES }[table];
        expect(header).toEqual(names.map(([name]) => name));
        cells.forEach((row, i) => {
          expect(row).toEqual((header as string[]).map((name) => csvText((twin[i] as Line)[name])));
        });
      }
    }

    // docs/tables.md's query, as a user runs it: signals per type per company.
    const perType = await duck.query(
      `SELECT company_domain, signal_type, count(*)::INTEGER AS signals, max(detected_at) AS newest
       FROM read_parquet(${glob('signals')}, union_by_name = false)
       GROUP BY company_domain, signal_type ORDER BY company_domain, signals DESC`,
    );
    const expected = new Map<string, number>();
    for (const signal of signals) {
      const key = `${(signal['company'] as Line | undefined)?.['domain']}|${signal.signal_type}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    expect(new Map(perType.map((r) => [`${r['company_domain']}|${r['signal_type']}`, r['signals']]))).toEqual(expected);
    const newestRows = await duck.query(
      `SELECT r.record_id, s.data->>'$.technologies' AS technologies
       FROM read_parquet(${glob('rows')}) r JOIN read_parquet(${glob('signals')}) s USING (record_id)
       WHERE s.detected_at = r.latest_signal_at`,
    );
    expect(newestRows.length).toBeGreaterThanOrEqual(
      answered.filter((l) => l['status'] === 'ok' && (l['signals'] as unknown[]).length > 0).length,
    );

    // The one CSV a CRM imports (rows.csv): every input row once and in input order, under the id column as the
    // export named it (`Id`: a Salesforce export), the kept column, then the enrichment under the Salesforce API names
    // docs/crm-round-trip.md lists; the invalid rows too, as `invalid` with their reason.
    const crm = manifest.rows_csv;
    expect(crm?.key).toBe('crm-tables/rows.csv');
    const crmBytes = await readFile(join(root, String(crm?.key)));
    expect(createHash('sha256').update(crmBytes).digest('hex')).toBe(crm?.sha256);
    const [crmHeader, ...crmRows] = await readCsvWithPython(join(root, String(crm?.key)));
    expect(crmHeader).toEqual(['Id', KEPT, ...SALESFORCE_ENRICH_FIELDS]);
    expect(crmRows).toHaveLength(lines.length);
    expect(crm?.lines).toBe(lines.length);
    const inputIds = rows.slice(1).map((row) => row.split(',')[0]);
    expect(crmRows.map((cells) => cells[0])).toEqual(inputIds);
    const crmColumns = crmHeader as string[];
    const crmInvalid = crmRows.filter((cells) => cells[crmColumns.indexOf('Signal_Status__c')] === 'invalid');
    expect(crmInvalid.map((cells) => [cells[0], cells[crmColumns.indexOf('Signal_Error_Message__c')]]).sort()).toEqual(
      invalid.map((line) => [String(line['record_id']), String(line['error'])]).sort(),
    );
    for (const cells of crmRows) {
      const url = cells[crmColumns.indexOf('Signal_Company_Linkedin_Url__c')] ?? '';
      if (url !== '') expect(url).toMatch(/^https:\/\/www\.linkedin\.com\/company\//);
    }

    // The invalid table: every bad row, with what it held and why.
    const bad = await duck.query(
      `SELECT "row", raw::VARCHAR AS raw, error, record_id FROM read_parquet(${glob('invalid')}) ORDER BY "row"`,
    );
    expect(bad).toEqual(
      invalid.map((line) => ({
        row: line['row'],
        raw: JSON.stringify(line['raw']),
        error: line['error'],
        record_id: line['record_id'],
      })),
    );
  });

  it('verify-emails: the rows table holds every verified address with its result, in each format', async () => {
    const addresses = Array.from({ length: 40 }, (_, i) => `person${i}@tables${i % 7}.com`);
    await writeFile(join(dir, 'emails.csv'), `email\n${addresses.join('\n')}\nnot-an-address\n`);
    const root = join(dir, 'verify');
    const result = await run<VerifyEmailsInput>('verifyEmails', {
      jobId: 'verify-tables',
      input: pathToFileURL(join(dir, 'emails.csv')).href,
      output: pathToFileURL(root).href,
      formats: ['parquet', 'csv'],
    });
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(pathToFileURL(root).href, 'verify-tables');
    const verified = lines.filter((line) => line['status'] !== 'invalid');
    const rowsGlob = sqlString(join(root, 'verify-tables', 'tables', 'rows', '*.parquet'));
    const rows = await duck.query(
      `SELECT "row", email, result, confidence, status FROM read_parquet(${rowsGlob}) ORDER BY "row"`,
    );
    expect(rows).toEqual(
      [...verified]
        .sort((a, b) => Number(a['row']) - Number(b['row']))
        .map((line) => ({
          row: line['row'],
          email: line['email'],
          result: line['result'] ?? null,
          confidence: line['confidence'] ?? null,
          status: line['status'],
        })),
    );
    expect(manifest.parts.filter((p) => p.format === 'jsonl' && p.table !== 'lines')).toEqual([]);
    expect(
      manifest.parts
        .filter((p) => p.table === 'invalid')
        .map((p) => p.format)
        .sort(),
    ).toEqual(['csv', 'parquet']);
  });

  it('a finished job run again with another --format writes the tables it lacks, with no API call', async () => {
    const mark = env.sandbox.truth.lastCall();
    const before = JSON.parse(await readFile(join(dir, 'enrich', 'crm-tables', '_manifest.json'), 'utf8')) as Manifest;
    expect(before.parts.some((p) => p.format === 'parquet')).toBe(true);
    const { result } = await runOnFile('bulkEnrich', 'crm.csv', 'enrich', {
      jobId: 'crm-tables',
      options: { limit: 5 },
      keepColumns: [KEPT],
      formats: ['parquet'],
    });
    expect(result.status).toBe('completed');
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);

    // A job first run without --format: its parquet tables come from its parts on the second run, no call made.
    const plainRoot = join(dir, 'plain');
    const input = {
      jobId: 'plain',
      input: pathToFileURL(join(dir, 'crm.csv')).href,
      output: pathToFileURL(plainRoot).href,
      options: { limit: 5 },
    };
    await run<BulkEnrichInput>('bulkEnrich', input);
    const afterFirst = env.sandbox.truth.lastCall();
    const again = await run<BulkEnrichInput>('bulkEnrich', { ...input, formats: ['parquet'] });
    expect(again.status).toBe('completed');
    expect(env.sandbox.truth.calls({ after: afterFirst })).toEqual([]);
    const signals = await duck.query(
      `SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(join(plainRoot, 'plain', 'tables', 'signals', '*.parquet'))})`,
    );
    const { lines } = await readJobOutput(pathToFileURL(plainRoot).href, 'plain');
    expect(signals[0]?.['n']).toBe(lines.flatMap((line) => (line['signals'] as unknown[] | undefined) ?? []).length);
  });

  it('enrich-contacts: every contact row carries the person and the employer, in the Parquet, CSV and JSONL tables and rows.csv', async () => {
    const people = env.sandbox.truth
      .intentContacts({ topic_ids: ['b2b_901', 'b2b_902'] })
      .map((item) => item.contact)
      .filter((c, i, all) => c.email && all.findIndex((o) => o.email === c.email) === i)
      .slice(0, 12);
    // An unknown person, and the first person again in capitals: a duplicate row, answered by the first row.
    const known = people.map((p) => String(p.email));
    const again = known[env.sandbox.truth.contactSignals(known).findIndex((t) => t.status === 'ok')] ?? '';
    const emails = [...known, 'nobody.here@tables-unknown-company.com', again.toUpperCase()];
    await writeFile(join(dir, 'contacts.csv'), `Record ID,Email\n${emails.map((e, i) => `p${i},${e}`).join('\n')}\n`);
    const { root, output, result } = await runOnFile('enrichContacts', 'contacts.csv', 'contacts', {
      jobId: 'contact-tables',
      options: { limit: 3 },
      formats: ['parquet', 'csv', 'jsonl'],
    });
    expect(result.status).toBe('completed');
    const { manifest, lines } = await readJobOutput(output, 'contact-tables');
    expect(lines).toHaveLength(emails.length);
    const lineParts = manifest.parts.filter((part) => part.table === 'lines');
    for (const table of ['rows', 'signals']) {
      expect((await tableParts(root, manifest, table, 'parquet')).length, table).toBe(lineParts.length);
    }

    // The person and the employer of every row, as the sandbox holds them (LinkedIn URLs absolute).
    const truths = env.sandbox.truth.contactSignals(emails);
    const absolute = (url: string | undefined) =>
      url === undefined ? null : url.startsWith('/') ? `https://www.linkedin.com${url}` : url;
    const expected = truths.map(
      (truth, i): Record<string, unknown> => ({
        record_id: `p${i}`,
        status: i === emails.length - 1 ? 'duplicate' : truth.status,
        ...Object.fromEntries(PERSON_COLUMNS.map((name) => [name, truth.person?.[name] ?? null])),
        company_name: truth.employer?.name ?? null,
        company_domain: truth.employer?.domain ?? null,
        company_linkedin_url: absolute(truth.employer?.linkedin_url),
      }),
    );
    const ok = expected.filter((row) => row['status'] === 'ok');
    expect(ok.length).toBeGreaterThanOrEqual(8);
    expect(expected.at(-2)?.['status']).toBe('not_found');
    expect(expected.at(-1)?.['email']).toBe(again);
    for (const row of ok)
      for (const name of PERSON_COLUMNS) expect(row[name], `${row['record_id']} ${name}`).toBeTruthy();

    const columns = [
      'record_id',
      'status',
      ...PERSON_COLUMNS,
      'company_name',
      'company_domain',
      'company_linkedin_url',
    ];
    const select = columns.map((name) => `"${name}"`).join(', ');
    const glob = (table: string, ext: string) => sqlString(join(root, 'contact-tables', 'tables', table, `*.${ext}`));
    const parquet = await duck.query(`SELECT ${select} FROM read_parquet(${glob('rows', 'parquet')}) ORDER BY "row"`);
    expect(parquet).toEqual(expected);
    const csv = await duck.query(
      `SELECT ${select} FROM read_csv(${glob('rows', 'csv')}, header = true, all_varchar = true) ORDER BY "row"::INTEGER`,
    );
    expect(csv).toEqual(expected);
    const jsonl = await duck.query(
      `SELECT ${select} FROM read_json(${glob('rows', 'jsonl.gz')}, format = 'newline_delimited') ORDER BY "row"`,
    );
    expect(jsonl).toEqual(expected);
    expect(await describeColumns(duck, `read_parquet(${glob('rows', 'parquet')})`)).toEqual(
      expect.arrayContaining(PERSON_COLUMNS.map((name) => [name, 'VARCHAR'])),
    );

    // rows.csv, as HubSpot takes it back: under `Record ID`, the person under the labels docs/crm-round-trip.md lists.
    const [header, ...crmRows] = await readCsvWithPython(join(root, 'contact-tables', 'rows.csv'));
    expect(header?.slice(0, 14)).toEqual([
      'Record ID',
      'Signal Row',
      'Signal Status',
      'Signal Matched By',
      'Signal Input',
      'Signal First Name',
      'Signal Last Name',
      'Signal Full Name',
      'Signal Email',
      'Signal Job Title',
      'Signal Linkedin Url',
      'Signal City',
      'Signal State',
      'Signal Country',
    ]);
    expect(crmRows.map((cells) => cells[0])).toEqual(expected.map((row) => row['record_id']));
    crmRows.forEach((cells, i) => {
      const want = expected[i] ?? {};
      PERSON_COLUMNS.forEach((name, k) => {
        expect(cells[5 + k], `${want['record_id']} ${name}`).toBe(want[name] ?? '');
      });
    });

    const signals = await duck.query(`SELECT signal_id, record_id FROM read_parquet(${glob('signals', 'parquet')})`);
    const expectedSignals = lines.flatMap((line) =>
      ((line['signals'] as Signal[] | undefined) ?? []).map((signal) => ({
        signal_id: signal.signal_id,
        record_id: line['record_id'],
      })),
    );
    expect(expectedSignals.length).toBeGreaterThan(0);
    expect(new Set(signals.map((row) => JSON.stringify(row)))).toEqual(
      new Set(expectedSignals.map((row) => JSON.stringify(row))),
    );
  });

  it('scheduled push: each run writes its signals table, one row per pushed signal, one schema across runs', async () => {
    const domains = Array.from({ length: 30 }, (_, i) => `pushed${i}.com`);
    await writeFile(join(dir, 'watchlist.csv'), `domain\n${domains.join('\n')}\n`);
    const root = join(dir, 'push');
    const output = pathToFileURL(root).href;
    const push = { name: 'nightly', watchlist: pathToFileURL(join(dir, 'watchlist.csv')).href, output };
    const runs = [];
    for (const [i, runAt] of ['2026-03-01T06:00:00Z', '2026-03-02T06:00:00Z'].entries()) {
      const result = await runPush(env, `push-tables-${i}`, { ...push, runAt, limit: 5, formats: ['parquet', 'csv'] });
      expect(result.status).toBe('completed');
      runs.push(await readPushRun(openStore(output), result));
    }
    const pushed = runs.flatMap((run) => run.lines);
    expect(pushed.length).toBeGreaterThan(20);
    for (const run of runs) {
      const lineParts = run.manifest.parts.filter((part) => part.table === 'lines');
      for (const format of ['parquet', 'csv']) {
        const tables = await tableParts(root, run.manifest as unknown as Manifest, 'signals', format);
        expect(tables.map((part) => part.lines)).toEqual(lineParts.map((part) => part.lines));
      }
    }
    const glob = sqlString(join(root, 'nightly', 'signals', 'dt=*', 'run-*', 'tables', 'signals', '*.parquet'));
    // hive_partitioning off: the dt= folder would otherwise be read as a column of its own.
    const from = `read_parquet(${glob}, union_by_name=false, hive_partitioning=false)`;
    expect(await describeColumns(duck, from)).toEqual(SIGNALS_TYPES);
    const rows = await readParquetRows(duck, from, SIGNALS_TYPES);
    expect(rows).toHaveLength(pushed.length);
    const byId = new Map(rows.map((row) => [String(row['signal_id']), row]));
    for (const line of pushed as unknown as Array<Signal & { domain: string }>) {
      const row = byId.get(line.signal_id) as DuckRow;
      expect(row, line.signal_id).toBeDefined();
      expect(row['domain']).toBe(line.domain);
      expect(row['record_id']).toBeNull();
      expect(row['detected_at']).toBe(iso(line.detected_at));
      expect(row['signal_type']).toBe(line.signal_type);
      expect(row['summary']).toBe(line.data['summary'] ?? null);
    }
  });
});

/** A CSV cell as the documented rule writes a JSONL value: empty for null, JSON for objects and lists. */
function csvText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : Array.isArray(value) ? JSON.stringify(value) : String(value);
  return /^[=+\-@\t\r]/.test(text) && typeof value !== 'number' ? `'${text}` : text;
}

const iso = (value: string) => new Date(Date.parse(value)).toISOString();

/** The spec's typed `data` fields, and what DuckDB must show for a signal. */
function expectSignalRow(row: DuckRow, signal: Signal, line: Line): void {
  expect(row['signal_type']).toBe(signal.signal_type);
  expect(row['signal_subtype']).toBe(signal['signal_subtype'] ?? null);
  expect(row['detected_at']).toBe(iso(signal.detected_at));
  expect(row['domain']).toBe(line['domain']);
  expect(row['row']).toBe(line['row']);
  expect(row['record_id']).toBe(line['record_id']);
  expect(row['company_name']).toBe((signal['company'] as Line | undefined)?.['name'] ?? null);
  expect(row['summary']).toBe(signal.data['summary'] ?? null);
  // Nothing of data is lost: the typed columns and the rest put back together give data as the service sent it.
  const rebuilt = JSON.parse(String(row['data'])) as Record<string, unknown>;
  const metrics: Record<string, unknown> = { ...((rebuilt['metrics'] as Record<string, unknown> | undefined) ?? {}) };
  for (const [name] of SIGNALS_TYPES.slice(11, -1)) {
    const value = row[name];
    if (value === null || value === undefined) continue;
    if (name.startsWith('metrics_')) metrics[name.slice('metrics_'.length)] = value;
    else rebuilt[name] = value;
  }
  if (Object.keys(metrics).length > 0) rebuilt['metrics'] = metrics;
  expect(rebuilt).toEqual(signal.data);
}

function expectRowsRow(row: DuckRow, line: Line): void {
  const signals = (line['signals'] as Signal[] | undefined) ?? [];
  expect(row['status']).toBe(line['status']);
  expect(row['record_id']).toBe(line['record_id']);
  expect(row[KEPT]).toBe((line['columns'] as Record<string, string>)[KEPT]);
  expect(row['matched_by']).toBe(line['matched_by']);
  expect(row['domain']).toBe(line['domain'] ?? null);
  expect(row['input']).toBe(line['input']);
  expect(row['company_name']).toBe((line['company'] as Line | undefined)?.['name'] ?? null);
  if (line['status'] === 'ok') {
    expect(row['signal_count']).toBe(signals.length);
    const newest = [...signals].sort((a, b) => Date.parse(b.detected_at) - Date.parse(a.detected_at))[0];
    expect(row['latest_signal_at']).toBe(newest ? iso(newest.detected_at) : null);
    expect(row['latest_signal_type']).toBe(newest?.signal_type ?? null);
    const byType = new Map<string, number>();
    for (const signal of signals) byType.set(signal.signal_type, (byType.get(signal.signal_type) ?? 0) + 1);
    for (const type of SIGNAL_TYPES) {
      expect(row[`signals_${type}`], type).toBe(byType.get(type.replaceAll('_', '-')) ?? 0);
    }
    expect(JSON.parse(String(row['signal_counts']))).toEqual(Object.fromEntries(byType));
  } else if (line['status'] === 'duplicate') {
    // A duplicate row carries its answer's headline: counts from its signal summary, no signals of its own.
    expect(row['duplicate_of']).toBe(line['duplicate_of']);
    expect(row['answer_status']).toBe(line['answer_status'] ?? null);
    const summary = line['signal_summary'] as Record<string, number> | undefined;
    if (summary) expect(row['signal_count']).toBe(Object.values(summary).reduce((a, b) => a + b, 0));
    expect(row['latest_signal_at']).toBeNull();
  } else if (line['status'] === 'not_found') {
    expect(row['signal_count']).toBe(0);
  } else {
    expect(row['signal_count']).toBeNull();
    expect(row['error_code']).toBe((line['error'] as Line)['code']);
  }
}
