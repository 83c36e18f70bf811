/**
 * Issue 35, findings 5 and 10. NUL is refused in every encoding (docs/security.md): on the old code a UTF-8 file's kept
 * value `Ann\0e` reached `rows.csv` raw and a website holding a NUL fell back to the company's name and was paid for;
 * only Windows-1252 checked. A UTF-16 file without its byte order mark was refused only by the column choice, listing
 * columns as `"I\u0000d\u0000"`; it is now named, with the flag that reads it. (An `.xlsx` cannot hold a NUL: XML 1.0
 * has no such character, and exceljs drops it on writing.)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnRequest, identifyRecord } from '../../../activities/input/identify.ts';
import { type InputRecord, openInput, readInputRecords } from '../../../activities/input/read-input.ts';
import { openStore } from '../../../config/storage.ts';
import { InputError } from '../../../connectors/errors.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-input-nul-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function read(
  name: string,
  bytes: Buffer | string,
  options: { encoding?: 'auto' | 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252'; keep?: string[] } = {},
): Promise<InputRecord[]> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  const source = await openInput(openStore, pathToFileURL(path).href, options.encoding ?? 'auto');
  const records: InputRecord[] = [];
  const request = { ...columnRequest('enrich', { keepColumns: options.keep }), idColumn: 'Id' };
  for await (const record of readInputRecords(source, request)) records.push(record);
  return records;
}

const CSV =
  'Id,Website,Account Name,Contact\n1,one.example,One,Ann\u0000e\n2,tw\u0000o.example,Two,Bob\n3,three.example,Three,Cy\n';

function expectRefusedNul(records: InputRecord[]) {
  expect(records).toHaveLength(3);
  const [kept, website, good] = records as [InputRecord, InputRecord, InputRecord];
  // The row whose kept value holds a NUL: an invalid record naming the column, its value carried without the NUL.
  expect(kept.error).toMatch(/column "Contact" holds a NUL character/);
  expect(kept.cols).toEqual({ Contact: 'Ann\uFFFDe' });
  // The website holding a NUL is an error record: it does not fall back to the name (which would be paid for).
  expect(website.error).toMatch(/column "Website" holds a NUL character/);
  expect(identifyRecord(website)).toMatchObject({ ok: false });
  expect(JSON.stringify(website)).not.toContain('\\u0000');
  expect(good.error).toBeUndefined();
  expect(identifyRecord(good)).toMatchObject({ ok: true, key: 'three.example' });
  expect(JSON.stringify(records)).not.toContain('\\u0000');
}

describe('NUL is refused in every encoding', () => {
  it('UTF-8', async () => {
    expectRefusedNul(await read('nul-utf8.csv', Buffer.from(CSV, 'utf8'), { keep: ['Contact'] }));
  });

  it('UTF-8 with a byte order mark, said with --encoding utf-8', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(CSV, 'utf8')]);
    expectRefusedNul(await read('nul-utf8-bom.csv', bytes, { keep: ['Contact'], encoding: 'utf-8' }));
  });

  it('UTF-16 with its byte order mark, little and big endian', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(CSV, 'utf16le')]);
    expectRefusedNul(await read('nul-utf16le.csv', le, { keep: ['Contact'] }));
    const be = Buffer.from(le);
    be.swap16();
    expectRefusedNul(await read('nul-utf16be.csv', be, { keep: ['Contact'] }));
  });

  it('Windows-1252, found and said', async () => {
    // A byte that is not UTF-8 after plain ASCII: the file is Windows-1252 (é is 0xE9).
    const bytes = Buffer.from(`${CSV}4,caf\u00e9.example,Caf\u00e9,Dee\n`, 'latin1');
    const found = await read('nul-1252.csv', bytes, { keep: ['Contact'] });
    expectRefusedNul(found.slice(0, 3));
    expect(found[3]?.cols).toEqual({ Contact: 'Dee' });
    expectRefusedNul(
      (await read('nul-1252-said.csv', bytes, { keep: ['Contact'], encoding: 'windows-1252' })).slice(0, 3),
    );
  });

  it('JSONL: a \\u0000 in a field the kit reads, and a bare line', async () => {
    const lines = [
      { Id: '1', Website: 'one.example', 'Account Name': 'One', Contact: 'Ann\u0000e' },
      { Id: '2', Website: 'tw\u0000o.example', 'Account Name': 'Two', Contact: 'Bob' },
      { Id: '3', Website: 'three.example', 'Account Name': 'Three', Contact: 'Cy' },
    ];
    const text = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    expectRefusedNul(await read('nul.jsonl', text, { keep: ['Contact'] }));
    const [bare] = await read('nul-bare.jsonl', `${JSON.stringify('fo\u0000o.example')}\n`);
    expect(bare?.error).toMatch(/NUL character/);
    expect(JSON.stringify(bare)).not.toContain('\\u0000');
  });

  it('a broken row holding a NUL is kept as invalid without it', async () => {
    const records = await read('nul-broken.csv', 'Id,Website\n1,a\u0000.example,extra,fields\n2,b.example\n');
    expect(records[0]?.error).toBeDefined();
    expect(JSON.stringify(records)).not.toContain('\\u0000');
    expect(records[1]?.error).toBeUndefined();
  });
});

describe('UTF-16 without a byte order mark', () => {
  const text = 'Id,Website\n1,one.example\n2,two.example\n';

  it('is named, with the --encoding that reads it, instead of a column choice listing "I\\u0000d\\u0000"', async () => {
    for (const [name, bytes, flag] of [
      ['le.csv', Buffer.from(text, 'utf16le'), 'utf-16le'],
      ['be.csv', Buffer.from(text, 'utf16le').swap16(), 'utf-16be'],
    ] as const) {
      for (const encoding of ['auto', 'utf-8', 'windows-1252'] as const) {
        const refused = await read(name, bytes, { encoding }).catch((error: unknown) => error);
        expect(refused, `${name} ${encoding}`).toBeInstanceOf(InputError);
        expect((refused as Error).message).toContain(`--encoding ${flag}`);
        expect((refused as Error).message).toMatch(/UTF-16 text without a byte order mark/);
        expect((refused as Error).message).not.toContain('\u0000');
      }
      // Said with the flag, every row is read.
      const records = await read(name, bytes, { encoding: flag });
      expect(records.map((r) => identifyRecord(r))).toMatchObject([
        { ok: true, key: 'one.example' },
        { ok: true, key: 'two.example' },
      ]);
    }
  });

  it('a file that only has a NUL here and there is not taken for UTF-16', async () => {
    const records = await read('sparse.csv', 'Id,Website\n1,one.example\n2,t\u0000wo.example\n3,three.example\n');
    expect(records.map((r) => r.error === undefined)).toEqual([true, false, true]);
  });
});
