/**
 * The dry run warns about every column whose header names a website, a domain, a LinkedIn URL or an email that the
 * job will not use to identify a row: a Salesforce accounts export as Data Loader writes it (API names, every field
 * quoted, CRLF), with custom fields beside the standard ones.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { printDryRun } from '../../../cli/dry-run.ts';
import { openStore } from '../../../config/storage.ts';
import { chooseColumns } from '../../../connectors/normalize/columns.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/crm/salesforce-accounts-custom-fields.csv', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-dry-run-unused-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the dry run names the identifier-like columns it leaves unused', () => {
  it('warns about a second website, a contact email and a person’s LinkedIn on an accounts export', async () => {
    const errors: string[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const output = pathToFileURL(join(dir, 'out')).href;
      await printDryRun(
        { workflow: 'bulkEnrich', input: { jobId: 'unused-columns', input: FIXTURE, output, options: {} } },
        (url) => openStore(url),
      );
    } finally {
      error.mockRestore();
      log.mockRestore();
    }
    const warned = errors.filter((line) => line.includes('is not used to identify a row'));
    expect(warned).toEqual([
      expect.stringContaining('"Billing_Website__c" names a website'),
      expect.stringContaining('"Primary_Contact_Email__c" names an email'),
      expect.stringContaining('"LinkedIn_Profile__c" names a LinkedIn URL'),
    ]);
  });

  it('says nothing of the columns it uses, the id, or columns that name no identifier', () => {
    const header = ['Id', 'Name', 'Website', 'LinkedIn__c', 'Industry', 'Phone'];
    const choice = chooseColumns(header, { roles: ['domain', 'linkedin_url', 'company_name'] });
    expect(choice.unused).toBeUndefined();
    const contacts = chooseColumns(['Id', 'Email', 'Website'], { roles: ['email', 'linkedin_person'] });
    expect(contacts.unused).toEqual([{ column: 'Website', names: 'a website' }]);
  });
});
