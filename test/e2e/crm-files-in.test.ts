/**
 * CRM files as the tools that export them write them (test/fixtures/crm/real/): a Salesforce report saved in
 * Windows-1252 with its blank lines and footer, an Excel "CSV (Comma delimited)" file in Windows-1252, Excel's
 * "Unicode Text" (UTF-16 LE, tab-separated) of a French report, a HubSpot export from a German-language account, an
 * Apollo people export and Salesforce contacts whose LinkedIn profile is a custom field. Each goes through the CLI
 * against the sandbox with no flag naming a column; rows.csv is read back by Python's csv module and held to the
 * export as Python reads it in its own encoding: every record once under the export's id header and value, names
 * decoded right, and nothing asked of the service for a blank or footer line (the sandbox's call record).
 */
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { readCsvWithPython } from '../helpers/tables.ts';

const FIXTURES = join(repoRoot, 'test/fixtures/crm/real');

interface Export {
  file: string;
  command: 'enrich' | 'enrich-contacts';
  /** How Python opens it: its encoding and separator. */
  encoding: string;
  delimiter: string;
  /** The export's id column, and a column of names whose accents must survive (kept with --keep-columns). */
  id: string;
  names: string;
  /** Lines of the file that are no records (blank lines, the report's footer). */
  skipped: number;
}

const EXPORTS: Export[] = [
  {
    file: 'salesforce-report-accounts.csv',
    command: 'enrich',
    encoding: 'cp1252',
    delimiter: ',',
    id: 'Account ID',
    names: 'Account Name',
    skipped: 6,
  },
  {
    file: 'excel-accounts-1252.csv',
    command: 'enrich',
    encoding: 'cp1252',
    delimiter: ',',
    id: 'Id',
    names: 'Name',
    skipped: 0,
  },
  {
    file: 'excel-unicode-text-fr.txt',
    command: 'enrich',
    encoding: 'utf-16',
    delimiter: '\t',
    id: 'ID du compte',
    names: 'Nom du compte',
    skipped: 0,
  },
  {
    file: 'hubspot-companies-de.csv',
    command: 'enrich',
    encoding: 'utf-8-sig',
    delimiter: ',',
    id: 'Datensatz-ID',
    names: 'Name des Unternehmens',
    skipped: 0,
  },
  {
    file: 'apollo-contacts.csv',
    command: 'enrich-contacts',
    encoding: 'utf-8',
    delimiter: ',',
    id: 'Apollo Contact Id',
    names: 'Last Name',
    skipped: 0,
  },
  {
    file: 'salesforce-contacts-custom-linkedin.csv',
    command: 'enrich-contacts',
    encoding: 'utf-8',
    delimiter: ',',
    id: 'Id',
    names: 'LastName',
    skipped: 0,
  },
];

let env: JobEnv;
let dir: string;

/** The command run in the test's folder against the sandbox, as a user types it. */
const cli = (args: string[], timeout = 60_000) => runCli(args, { cwd: dir, env: env.childEnv(), timeout }, 'minus-one');

describe('CRM files in as their tools write them', () => {
  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 31 } });
    await env.startWorker();
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-crm-in-'));
  });
  afterAll(async () => {
    await env?.stop();
  });

  for (const crm of EXPORTS) {
    it(`${crm.file}: every record once under the export's own id, names decoded, nothing asked for a skipped line`, async () => {
      await copyFile(join(FIXTURES, crm.file), join(dir, crm.file));
      const jobId = crm.file.replace(/\.(csv|txt)$/, '');
      const mark = env.sandbox.truth.lastCall();
      const result = await runCli(
        [crm.command, '--input', crm.file, '--output', 'out', '--job-id', jobId, '--format', 'csv'].concat([
          '--keep-columns',
          crm.names,
          '--wait',
        ]),
        { cwd: dir, env: env.childEnv(), timeout: 120_000 },
        'minus-one',
      );
      expect(result.code, result.stderr).toBe(0);
      expect((JSON.parse(result.stdout) as JobResult).status).toMatch(/^completed/);

      const [exportHeader, ...records] = await readCsvWithPython(join(FIXTURES, crm.file), crm.delimiter, crm.encoding);
      const exported = records.filter((cells) => cells.some((cell) => cell !== '') && cells.length > 1);
      const [header, ...rows] = await readCsvWithPython(join(dir, 'out', jobId, 'rows.csv'));
      const at = (names: string[] | undefined, name: string) => {
        const i = (names ?? []).indexOf(name);
        expect(i, `${name} in ${JSON.stringify(names)}`).toBeGreaterThanOrEqual(0);
        return i;
      };
      expect(header?.[0]).toBe(crm.id);
      expect(rows.map((cells) => cells[0])).toEqual(exported.map((cells) => cells[at(exportHeader, crm.id)]));
      expect(rows.map((cells) => cells[at(header, crm.names)])).toEqual(
        exported.map((cells) => cells[at(exportHeader, crm.names)]),
      );
      for (const cells of rows) expect(cells.join(' ')).not.toContain('\uFFFD');

      const manifest = JSON.parse(await readFile(join(dir, 'out', jobId, '_manifest.json'), 'utf8')) as {
        counts: { input_rows: number; skipped_lines?: number };
      };
      expect(manifest.counts.input_rows).toBe(exported.length);
      expect(manifest.counts.skipped_lines ?? 0).toBe(crm.skipped);
      // Nothing was asked for a line that is no record: every value the service was asked is one of the export's.
      const values = new Set(exported.flat().map((cell) => cell.toLowerCase()));
      const asked = env.sandbox.truth
        .calls({ after: mark })
        .flatMap((call) => {
          const a = (call.asked ?? {}) as Record<string, unknown>;
          return [...((a['domains'] as string[] | undefined) ?? []), ...(a['domain'] ? [String(a['domain'])] : [])];
        })
        .map((value) => value.toLowerCase());
      for (const value of asked) {
        expect(
          [...values].some((cell) => cell.includes(value)),
          `asked ${value}`,
        ).toBe(true);
      }
    });
  }

  it('hubspot-companies.xlsx: the first sheet, streamed, each cell as the sheet shows it, every record once', async () => {
    await copyFile(join(FIXTURES, 'hubspot-companies.xlsx'), join(dir, 'hubspot-companies.xlsx'));
    const result = await cli(
      [
        'enrich',
        '--input',
        'hubspot-companies.xlsx',
        '--output',
        'out',
        '--job-id',
        'hubspot-xlsx',
        '--format',
        'csv',
      ].concat(['--keep-columns', 'Company name,Create Date,Phone Number', '--wait']),
      120_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const [header, ...rows] = await readCsvWithPython(join(dir, 'out', 'hubspot-xlsx', 'rows.csv'));
    expect(header?.slice(0, 4)).toEqual(['Record ID', 'Company name', 'Create Date', 'Phone Number']);
    // As the workbook holds them (test/fixtures/crm/real, written as HubSpot writes its .xlsx export).
    expect(rows.map((cells) => cells.slice(0, 4))).toEqual([
      ['9130001', 'Crème Brûlée Café', '2025-03-14', '+1 425 555 0101'],
      ['9130002', 'Müller & Söhne GmbH', '2024-11-02', ''],
      ['9130003', 'Señor Frío S.A.', '2026-01-05', '-'],
    ]);
    // --sheet reads another sheet; one the workbook lacks is named in the failure.
    const notes = await cli([
      'enrich',
      '--input',
      'hubspot-companies.xlsx',
      '--output',
      'out',
      '--sheet',
      'Nope',
      '--dry-run',
    ]);
    expect(notes.code).not.toBe(0);
    expect(notes.stderr).toContain('no sheet named "Nope"');
  });

  it('refuses a file that is neither UTF-8 nor Windows-1252 before anything starts (exit 2), naming row and byte', async () => {
    const mixed = Buffer.concat([
      Buffer.from('Id,Name,Website\r\n1,Café,cafe.example\r\n', 'utf8'),
      Buffer.from('2,Crème,creme.example\r\n', 'latin1'),
    ]);
    await writeFile(join(dir, 'mixed.csv'), mixed);
    const mark = env.sandbox.truth.lastCall();
    const result = await cli(['enrich', '--input', 'mixed.csv', '--output', 'out', '--job-id', 'mixed', '--wait']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('row 2 (line 3), byte');
    expect(result.stderr).toContain('--encoding');
    expect(env.sandbox.truth.calls({ after: mark })).toEqual([]);
    // Said with --encoding, the same file is read as the user says (its UTF-8 row as Windows-1252 text): every row.
    const said = await runCli(
      [
        'enrich',
        '--input',
        'mixed.csv',
        '--output',
        'out',
        '--job-id',
        'mixed-1252',
        '--encoding',
        'windows-1252',
      ].concat(['--keep-columns', 'Name', '--format', 'csv', '--wait']),
      { cwd: dir, env: env.childEnv(), timeout: 120_000 },
      'minus-one',
    );
    expect(said.code, said.stderr).toBe(0);
    const [, ...saidRows] = await readCsvWithPython(join(dir, 'out', 'mixed-1252', 'rows.csv'));
    expect(saidRows.map((cells) => cells[0])).toEqual(['1', '2']);
    expect(saidRows[1]).toContain('Crème');
    const bogus = await cli(['enrich', '--input', 'mixed.csv', '--output', 'out', '--encoding', 'ebcdic', '--dry-run']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('--encoding must be one of');
    const missing = await cli(['enrich', '--input', 'nowhere.csv', '--output', 'out', '--job-id', 'nowhere', '--wait']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');

    // A dry run names the columns it chose and warns when none is the record's id.
    await writeFile(join(dir, 'no-id.csv'), 'Website,Name\r\nacme.example,Acme\r\n');
    const dry = await cli(['enrich', '--input', 'no-id.csv', '--output', 'out', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).columns).toMatchObject({ domain: 'Website', company_name: 'Name' });
    expect(dry.stderr).toContain('warning: no id column found');
  });
});
