/**
 * Columns found as a person names them: each CRM export under test/fixtures/crm/ (written from the tools' documented
 * export formats) is read with no flags, its identifier, id and kept columns chosen by header, and every row becomes
 * one batch item, duplicate or invalid record carrying its record id.
 */

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delimiterOf } from '../../../activities/input/read-input.ts';
import { prepareInput } from '../../../activities/jobs/prepare.ts';
import type { JobRef, PreparedInput } from '../../../activities/jobs/types.ts';
import { readPartLines } from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { ColumnError } from '../../../connectors/errors.ts';
import { chooseColumns, headerKey } from '../../../connectors/normalize/columns.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/crm/', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-crm-columns-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every row's record id as prepare wrote it, from batch files, single batches, duplicates and invalid parts. */
async function prepareFixture(file: string, kind: JobRef['kind'] = 'enrich', extra: object = {}) {
  const job: JobRef = { jobId: file.replace(/\W/g, '-'), kind, output: pathToFileURL(join(dir, 'out')).href };
  const env = new MockActivityEnvironment();
  const prepared: PreparedInput = await env.run(prepareInput, openStore, {
    job,
    input: join(FIXTURES, file),
    batchSize: 100,
    ...extra,
  });
  const work = join(dir, 'out', job.jobId, 'work');
  const rows: Array<{ row: number; id?: string; kind: string; v?: string; m?: string }> = [];
  for (const name of (await readdir(work)).sort()) {
    const kindOf = name.startsWith('batch-')
      ? 'bulk'
      : name.startsWith('single-')
        ? 'single'
        : name.startsWith('dups-')
          ? 'duplicate'
          : undefined;
    if (!kindOf) continue;
    for (const line of (await readFile(join(work, name), 'utf8')).split('\n').filter(Boolean)) {
      rows.push({ ...(JSON.parse(line) as { row: number; id?: string }), kind: kindOf });
    }
  }
  const invalidKey = `${job.jobId}/parts/invalid-00000.jsonl.gz`;
  const store = openStore(job.output);
  if (await store.exists(invalidKey)) {
    for (const line of await readPartLines<{ row: number; record_id: string | null }>(store, invalidKey)) {
      rows.push({ row: line.row, ...(line.record_id ? { id: line.record_id } : {}), kind: 'invalid' });
    }
  }
  return { prepared, rows: rows.sort((a, b) => a.row - b.row) };
}

describe('CRM exports run with no flags', () => {
  it.each([
    {
      file: 'salesforce-accounts.csv',
      columns: { domain: 'Website', company_name: 'Name', record_id: 'Id' },
      ids: [
        '0015g00000Abc01AAA',
        '0015g00000Abc02AAA',
        '0015g00000Abc03AAA',
        '0015g00000Abc04AAA',
        '0015g00000Abc05AAA',
      ],
      kinds: ['bulk', 'bulk', 'single', 'bulk', 'duplicate'],
    },
    {
      file: 'hubspot-companies.csv',
      columns: {
        domain: 'Company Domain Name, Website URL',
        linkedin_url: 'LinkedIn Company Page',
        company_name: 'Company name',
        record_id: 'Record ID',
      },
      ids: ['9001', '9002', '9003', '9004'],
      kinds: ['bulk', 'bulk', 'single', 'bulk'],
    },
    {
      file: 'pipedrive-organizations.csv',
      columns: {
        domain: 'Organization - Website',
        linkedin_url: 'Organization - LinkedIn profile',
        company_name: 'Organization - Name',
        record_id: 'Organization - ID',
      },
      ids: ['31', '32', '33'],
      kinds: ['bulk', 'single', 'bulk'],
    },
    {
      file: 'dynamics-accounts.csv',
      columns: { domain: 'Website', company_name: 'Account Name', record_id: '(Do Not Modify) Account' },
      // Kept with no flag: Dynamics 365 updates a row on re-import only when they come back as exported.
      kept: ['(Do Not Modify) Row Checksum', '(Do Not Modify) Modified On'],
      ids: [
        '8d9c3b2e-1f4a-4c5b-9e2d-000000000001',
        '8d9c3b2e-1f4a-4c5b-9e2d-000000000002',
        '8d9c3b2e-1f4a-4c5b-9e2d-000000000003',
      ],
      kinds: ['bulk', 'single', 'bulk'],
    },
    {
      file: 'zoho-accounts.csv',
      columns: { domain: 'Website', company_name: 'Account Name', record_id: 'Record Id' },
      ids: ['zcrm_5725767000000412001', 'zcrm_5725767000000412002', 'zcrm_5725767000000412003'],
      kinds: ['bulk', 'single', 'bulk'],
    },
    {
      file: 'close-leads.csv',
      columns: { domain: 'url', company_name: 'display_name', record_id: 'id' },
      // A lead's contact email names no company: an enrich job leaves it, and says so.
      unused: [{ column: 'primary_contact_email', names: 'an email' }],
      ids: ['lead_7nQz3kR9xYb1', 'lead_7nQz3kR9xYb2', 'lead_7nQz3kR9xYb3'],
      kinds: ['bulk', 'single', 'bulk'],
    },
  ] as {
    file: string;
    columns: Record<string, string>;
    kept?: string[];
    unused?: object[];
    ids: string[];
    kinds: string[];
  }[])(
    '$file: columns by header, every row once with its id',
    async ({ file, columns, kept = [], unused, ids, kinds }) => {
      const { prepared, rows } = await prepareFixture(file);
      expect(prepared.columns).toEqual({ ...columns, kept, ...(unused ? { unused } : {}) });
      expect(rows.map((row) => row.id)).toEqual(ids);
      expect(rows.map((row) => row.kind)).toEqual(kinds);
      expect(prepared.rows).toBe(ids.length);
      expect(prepared.invalid).toBe(0);
    },
  );

  it('a contacts export: Email found by header, addresses the service treats as one are one input', async () => {
    const { prepared, rows } = await prepareFixture('hubspot-contacts.csv', 'verify-emails', {
      keepColumns: ['first name', 'COMPANY_NAME'],
    });
    expect(prepared.columns).toEqual({ email: 'Email', record_id: 'Record ID', kept: ['First Name', 'Company Name'] });
    expect(rows.map((row) => [row.id, row.kind])).toEqual([
      ['501', 'bulk'],
      ['502', 'duplicate'],
      ['503', 'bulk'],
      ['504', 'invalid'],
    ]);
    expect(rows[0]?.v).toBe('nia.obrien@x.com');
  });
});

describe('header matching', () => {
  it('a Salesforce accounts export with its LinkedIn page in LinkedIn__c: rows with a page and a name go by the page', async () => {
    // As Data Loader exports it: API names, every field quoted. LinkedIn__c names no person: the company's page.
    const { prepared, rows } = await prepareFixture('salesforce-accounts-linkedin.csv');
    expect(prepared.columns).toMatchObject({ domain: 'Website', linkedin_url: 'LinkedIn__c', company_name: 'Name' });
    expect(rows.map((row) => [row.id, row.m ?? 'domain'])).toEqual([
      ['0015g00000Lnk01AAA', 'linkedin_url'],
      ['0015g00000Lnk02AAA', 'linkedin_url'],
      ['0015g00000Lnk03AAA', 'domain'],
    ]);
    const header = ['Id', 'Name', 'LinkedIn_URL__c', 'LinkedIn_Profile__c'];
    expect(
      chooseColumns(header, { roles: ['domain', 'linkedin_url', 'company_name'] }).identifiers.linkedin_url,
    ).toEqual(['LinkedIn_URL__c']);
    expect(chooseColumns(['Id', 'Email', 'LinkedIn__c'], { roles: ['email', 'linkedin_person'] }).identifiers).toEqual({
      email: ['Email'],
      linkedin_person: ['LinkedIn__c'],
    });
  });

  it('ignores case, spaces, underscores, hyphens and a byte-order mark', () => {
    expect(headerKey('\uFEFFCompany_Domain-Name ')).toBe(headerKey('company domain name'));
    expect(chooseColumns(['Website'], { roles: ['domain'], column: 'website' }).identifiers).toEqual({
      domain: ['Website'],
    });
    expect(chooseColumns(['ACCOUNT NAME'], { roles: ['domain', 'company_name'], column: 'account_name' })).toEqual({
      identifiers: { company_name: ['ACCOUNT NAME'] },
      kept: [],
    });
  });

  it('an input without a usable column lists its columns and names the flag', () => {
    const choose = () => chooseColumns(['Owner', 'Phone'], { roles: ['domain', 'linkedin_url', 'company_name'] });
    expect(choose).toThrow(ColumnError);
    expect(choose).toThrow(/its columns: "Owner", "Phone"\); name the column with --column <name>/);
    expect(() => chooseColumns(['Website'], { roles: ['domain'], idColumn: 'Acct' })).toThrow(/--id-column "Acct"/);
    expect(() => chooseColumns(['Website'], { roles: ['domain'], keepColumns: ['x'] })).toThrow(/--keep-columns "x"/);
  });

  it('finds the separator Excel wrote: comma, semicolon or tab', () => {
    expect(delimiterOf('Id,Name,Website')).toBe(',');
    expect(delimiterOf('Account Name;Website;"a,b"')).toBe(';');
    expect(delimiterOf('Record Id\tAccount Name\tWebsite')).toBe('\t');
  });
});
