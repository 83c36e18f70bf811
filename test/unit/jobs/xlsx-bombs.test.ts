/**
 * Issue 35, findings 3 and 6: a 2 MB workbook without `sharedStrings.xml` made exceljs spool a 2,048 MB sheet into
 * TMPDIR, left there after the job failed; a workbook of 16,384 columns × 30,000 rows (417 KB) took 166 s of CPU. The
 * bombs are built here by hand (a zip written byte by byte, its deflate made of one small block repeated), small on
 * disk; TMPDIR points at a fresh folder and must be as empty after every outcome as before.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { constants, deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { columnRequest } from '../../../activities/input/identify.ts';
import { type InputRecord, openInput, readInputRecords } from '../../../activities/input/read-input.ts';
import { openStore } from '../../../config/storage.ts';
import { InputError } from '../../../connectors/errors.ts';

const MiB = 2 ** 20;
let dir: string;
let tmp: string;
let savedTmp: string | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-xlsx-bombs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  // A fresh TMPDIR per case: what the reader (or exceljs under it) leaves there is seen.
  tmp = join(dir, `tmp-${Math.random().toString(36).slice(2)}`);
  await mkdir(tmp);
  savedTmp = process.env['TMPDIR'];
  process.env['TMPDIR'] = tmp;
});
afterEach(() => {
  if (savedTmp === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmp;
});

/** One zip entry: its raw deflate and the sizes its directory gives. */
interface Entry {
  path: string;
  deflated: Buffer;
  /** What the directory says the entry inflates to. */
  size: number;
}

/** A zip written byte by byte (no CRC: the readers under test do not check it). */
function zipOf(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.path);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(entry.deflated.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(entry.deflated.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.deflated);
    centrals.push(central, name);
    offset += local.length + name.length + entry.deflated.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const deflated = (text: string) => deflateRawSync(Buffer.from(text));
const entry = (path: string, text: string): Entry => ({
  path,
  deflated: deflated(text),
  size: Buffer.byteLength(text),
});

/**
 * `head`, then `unit` repeated `times`, then `tail`, as one raw deflate stream: each piece is flushed to a byte
 * boundary as a block of its own, so the repeated block is compressed once and copied (2 GiB cost about 2 MB).
 */
function repeatedDeflate(head: string, unit: string, times: number, tail: string): Entry {
  const block = (text: string) => deflateRawSync(Buffer.from(text), { finishFlush: constants.Z_SYNC_FLUSH });
  const unitBlock = block(unit);
  const last = deflateRawSync(Buffer.from(tail));
  const parts = [block(head), ...Array.from({ length: times }, () => unitBlock), last];
  const size = Buffer.byteLength(head) + Buffer.byteLength(unit) * times + Buffer.byteLength(tail);
  return { path: '', deflated: Buffer.concat(parts), size };
}

const SHEET_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
  '<row r="1"><c r="A1" t="inlineStr"><is><t>Website</t></is></c></row>';
const SHEET_TAIL = '</sheetData></worksheet>';

/** The entries every workbook here has besides its sheet: no shared strings, as in the bomb. */
function workbookEntries(): Entry[] {
  return [
    entry(
      '[Content_Types].xml',
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="xml" ContentType="application/xml"/></Types>',
    ),
    entry(
      'xl/workbook.xml',
      '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>' +
        '<sheet name="Accounts" sheetId="1" r:id="rId1"/></sheets></workbook>',
    ),
    entry(
      'xl/_rels/workbook.xml.rels',
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" ' +
        'Target="worksheets/sheet1.xml"/></Relationships>',
    ),
  ];
}

/** A row of one website, as an inline string (the same row, again and again). */
const ROW = '<row r="2"><c r="A2" t="inlineStr"><is><t>bomb.example</t></is></c></row>';

async function readAll(name: string, bytes: Buffer): Promise<{ records: InputRecord[]; error?: unknown }> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  const records: InputRecord[] = [];
  try {
    const source = await openInput(openStore, pathToFileURL(path).href);
    for await (const record of readInputRecords(source, columnRequest('enrich', {}))) records.push(record);
    return { records };
  } catch (error) {
    return { records, error };
  }
}

describe('.xlsx bombs', () => {
  it('a sheet the directory says inflates to 2 GiB, without shared strings: refused before reading, TMPDIR unchanged', async () => {
    const sheet = repeatedDeflate(SHEET_HEAD, ROW.repeat(1 + MiB / ROW.length), 2048, SHEET_TAIL);
    const bytes = zipOf([...workbookEntries(), { ...sheet, path: 'xl/worksheets/sheet1.xml' }]);
    expect(bytes.length).toBeLessThan(8 * MiB);
    expect(sheet.size).toBeGreaterThan(2 * 1024 * MiB);
    const { records, error } = await readAll('honest-bomb.xlsx', bytes);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/the workbook inflates to \d+ MiB, past the \d+ MiB .*nothing was read/);
    expect(records).toEqual([]);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('a sheet whose directory lies (says 1 MiB, inflates to 256 MiB): refused once it passes what it said, TMPDIR unchanged', async () => {
    const sheet = repeatedDeflate(SHEET_HEAD, ROW.repeat(1 + MiB / ROW.length), 256, SHEET_TAIL);
    const bytes = zipOf([...workbookEntries(), { ...sheet, path: 'xl/worksheets/sheet1.xml', size: MiB }]);
    const { records, error } = await readAll('lying-bomb.xlsx', bytes);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/entry xl\/worksheets\/sheet1.xml inflates past the 1048576 bytes/);
    // What it read before passing its size stays within that size (each row is one record).
    expect(records.length).toBeLessThan(MiB / ROW.length);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('16,384 columns × 30,000 rows: refused at its first row past the column cap, with the reason', async () => {
    const wide = (r: number, value: string) =>
      `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>${value}</t></is></c>` +
      `<c r="XFD${r}" t="inlineStr"><is><t>x</t></is></c></row>`;
    const rows = Array.from({ length: 30_000 }, (_, i) => wide(i + 2, `co${i}.example`)).join('');
    const text = `${SHEET_HEAD.replace('<row r="1"><c r="A1" t="inlineStr"><is><t>Website</t></is></c></row>', wide(1, 'Website'))}${rows}${SHEET_TAIL}`;
    const bytes = zipOf([...workbookEntries(), entry('xl/worksheets/sheet1.xml', text)]);
    expect(bytes.length).toBeLessThan(MiB);
    const { records, error } = await readAll('wide.xlsx', bytes);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/sheet row 1 reaches column 16384, past the 2048 columns/);
    expect(records).toEqual([]);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('not a zip at all: refused by name, TMPDIR unchanged', async () => {
    const { error } = await readAll('not-a-zip.xlsx', Buffer.from('Website\nexample.com\n'));
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/not a readable \.xlsx workbook/);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('a genuine workbook, its sheet before its shared strings in the zip, is read whole and leaves TMPDIR unchanged', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Accounts');
    sheet.addRow(['Id', 'Website']);
    for (let i = 0; i < 500; i++) sheet.addRow([`00${i}`, `co${i}.example`]);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    const { records, error } = await readAll('genuine.xlsx', bytes);
    expect(error).toBeUndefined();
    expect(records).toHaveLength(500);
    expect(records[499]?.candidates?.[0]?.raw).toBe('co499.example');
    expect(await readdir(tmp)).toEqual([]);
  });
});
