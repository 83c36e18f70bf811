/**
 * A CRM export as a user hands it to the command: an export without a usable column is refused before anything
 * starts (exit 2, listing its columns and naming the flag), and `--dry-run` says which column it chose for each role
 * and counts bulk and single calls apart. Runs the real entry in a child process; no server is needed for either.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../../testkit/drill-input.ts';

const run = promisify(execFile);
const main = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../fixtures/crm/', import.meta.url));

async function cli(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], {
      env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await tempDir('crm-cli');
});
afterAll(removeTempDirs);

describe('a CRM export on the command line', () => {
  it('without a usable column: exit 2 before anything starts, its columns listed and the flag named', async () => {
    await writeFile(join(dir, 'owners.csv'), 'Owner;Phone;Region\nann;+1 555;east\n');
    const out = pathToFileURL(join(dir, 'out')).href;
    const result = await cli(['enrich', '--input', join(dir, 'owners.csv'), '--output', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"Owner", "Phone", "Region"');
    expect(result.stderr).toContain('--column');
    const missing = await cli([
      'enrich',
      '--input',
      join(FIXTURES, 'zoho-accounts.csv'),
      '--output',
      out,
      '--id-column',
      'Acct',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--id-column "Acct"');
  });

  it('--dry-run names the column chosen for each role and counts bulk and single calls apart', async () => {
    const out = pathToFileURL(join(dir, 'out')).href;
    const result = await cli([
      'enrich',
      '--input',
      join(FIXTURES, 'hubspot-companies.csv'),
      '--output',
      out,
      '--keep-columns',
      'company_owner',
      '--limit',
      '10',
      '--dry-run',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report['columns']).toEqual({
      domain: 'Company Domain Name, Website URL',
      linkedin_url: 'LinkedIn Company Page',
      company_name: 'Company name',
      record_id: 'Record ID',
      kept: ['Company owner'],
    });
    // Hooli, Pied Piper and Stark by domain (one bulk call); Vandelay by its LinkedIn page (one single call).
    expect(report['callsByKind']).toMatchObject({ bulk: 1, single: 1 });
    expect(report['calls']).toBe(2);
    // Four companies at their worst: 10 signals × 2 credits each.
    expect((report['credits'] as { worstCase: number }).worstCase).toBe(80);
  });
});
