/**
 * Schedules take every input a one-off job takes (issue 36.2): a nightly CRM sync over an Excel workbook (`--sheet`)
 * and over a Salesforce report saved as Windows-1252 (`--encoding`), two nights each: every record read, its kept
 * columns decoded as the file says, and the second night pays nothing.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../activities/sync/types.ts';
import { openStore } from '../../config/storage.ts';
import { useScheduleEnv } from '../helpers/schedule-cli.ts';
import { readCsv } from '../promises/crm-sync-helpers.ts';
import { chargedSince } from '../promises/oracle.ts';

// The first: 'É' then Word's '’' are, as Windows-1252 bytes (C9 92), a valid UTF-8 pair, so only --encoding reads it.
const NAMES = ['CAFÉ’S BAKERY', 'Café Crème', 'Señor Frío', 'Zürich Größe', 'Ærø Ånd', 'Müller & Söhne'];
const accounts = Array.from({ length: 12 }, (_, i) => ({
  id: `0015g00000${String(i).padStart(3, '0')}`,
  name: `${NAMES[i % NAMES.length]} ${i}`,
  website: `https://www.inputs-night-co${i}.com`,
}));

describe('a schedule reads every input a job reads', () => {
  const { ctx, cli, createNightly } = useScheduleEnv('schedule-inputs');

  /** Two nights of a schedule over `input`: what each returned, and the first night's rows. */
  async function twoNights(name: string, input: string, flags: string[]) {
    const output = pathToFileURL(join(ctx.dir, `${name}-out`)).href;
    const created = await createNightly(name, {
      input,
      output,
      flags: ['--limit', '3', '--keep-columns', 'Account Name', ...flags],
    });
    expect(created.code).toBe(0);
    const mark = ctx.env.sandbox.truth.lastCall();
    const first = await cli<SyncResult>('run', name, '--wait');
    expect(first).toMatchObject({ code: 0, out: { status: 'completed', records: { total: 12, new: 12 } } });
    const truth = ctx.env.sandbox.truth.companySignals(accounts.map((_, i) => `inputs-night-co${i}.com`));
    expect(chargedSince(ctx.env.sandbox, mark)).toBe(
      truth.reduce((sum, t) => sum + 2 * t.signals.slice(0, 3).length, 0),
    );
    const rows = await readCsv(openStore(output), first.out.rowsUrl);
    const mark2 = ctx.env.sandbox.truth.lastCall();
    const second = await cli<SyncResult>('run', name, '--wait');
    expect(second).toMatchObject({ code: 0, out: { status: 'completed', records: { total: 12, new: 0, changed: 0 } } });
    expect(chargedSince(ctx.env.sandbox, mark2)).toBe(0);
    return rows;
  }

  it('an .xlsx workbook, its accounts on a named sheet (--sheet), two nights', async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('Summary').addRows([
      ['Report', 'Accounts'],
      ['Generated', '2026-03-01'],
    ]);
    const sheet = workbook.addWorksheet('Accounts');
    sheet.addRow(['Account ID', 'Account Name', 'Website']);
    for (const a of accounts) sheet.addRow([a.id, a.name, a.website]);
    const path = join(ctx.dir, 'Accounts.xlsx');
    await workbook.xlsx.writeFile(path);
    const rows = await twoNights('xlsx-nightly', pathToFileURL(path).href, ['--sheet', 'Accounts']);
    expect(rows.map((r) => [r['Account ID'], r['Account Name']]).sort()).toEqual(
      accounts.map((a) => [a.id, a.name]).sort(),
    );
  });

  it('a Salesforce report saved as Windows-1252 (--encoding windows-1252), its footer skipped, two nights', async () => {
    // As Salesforce's "Export details, CSV" writes it: every value quoted, CRLF, the report's footer lines after a blank.
    const quote = (values: string[]) => values.map((v) => `"${v.replaceAll('"', '""')}"`).join(',');
    const lines = [
      quote(['Account ID', 'Account Name', 'Website']),
      ...accounts.map((a) => quote([a.id, a.name, a.website])),
      '',
      quote(['Total']),
      quote(['Confidential Information - Do Not Distribute']),
      quote(['Copyright © 2000-2026 salesforce.com, inc. All rights reserved.']),
    ];
    const path = join(ctx.dir, 'report.csv');
    // Windows-1252: Latin-1's bytes, and '’' as 0x92.
    await writeFile(path, Buffer.from(`${lines.join('\r\n')}\r\n`.replaceAll('’', '\x92'), 'latin1'));
    const rows = await twoNights('cp1252-nightly', pathToFileURL(path).href, ['--encoding', 'windows-1252']);
    expect(rows.map((r) => [r['Account ID'], r['Account Name']]).sort()).toEqual(
      accounts.map((a) => [a.id, a.name]).sort(),
    );
  });
});
