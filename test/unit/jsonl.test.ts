import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import { JsonlSyntaxError } from '../../connectors/errors.ts';
import {
  CsvInputError,
  encodeJsonl,
  openDecoded,
  readCsvRecords,
  readJsonl,
  readJsonlRecords,
  writeJsonl,
} from '../../connectors/jsonl.ts';
import { readAll } from '../../connectors/storage/index.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-jsonl-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const chunksOf = (parts: (string | Buffer)[]) =>
  Readable.from(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));

describe('readJsonlRecords', () => {
  const text = '\uFEFF{"a":1}\r\n\n{"é":"ü€"}\n  \nnot json\n[1,2]\n"x"';

  it('yields values with physical line numbers wherever the chunks are cut, and bad lines as errors', async () => {
    const bytes = Buffer.from(text);
    const expected = [
      { line: 1, value: { a: 1 } },
      { line: 3, value: { é: 'ü€' } },
      { line: 5, error: expect.stringMatching(/^not valid JSON: /), raw: 'not json' },
      { line: 6, value: [1, 2] },
      { line: 7, value: 'x' },
    ];
    for (let cut = 0; cut <= bytes.length; cut++) {
      const entries = await collect(readJsonlRecords(chunksOf([bytes.subarray(0, cut), bytes.subarray(cut)])));
      expect(entries).toEqual(expected);
    }
    expect(await collect(readJsonlRecords(chunksOf([...bytes].map((b) => Buffer.from([b])))))).toEqual(expected);
  });

  it('readJsonl throws at the first bad line, naming it', async () => {
    const read = collect(readJsonl(chunksOf([text])));
    await expect(read).rejects.toBeInstanceOf(JsonlSyntaxError);
    await expect(collect(readJsonl(chunksOf([text])))).rejects.toThrow(/^line 5 is not valid JSON .*: not json$/);
  });

  it('reports an over-long line and goes on', async () => {
    const long = `{"x":"${'y'.repeat(200)}"}`;
    const entries = await collect(
      readJsonlRecords(chunksOf(['{"a":1}\n', long.slice(0, 50), long.slice(50), '\n{"b":2}\n']), {
        maxLineBytes: 100,
      }),
    );
    expect(entries).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, error: 'line longer than 100 bytes', raw: '' },
      { line: 3, value: { b: 2 } },
    ]);
  });

  it('gunzips when asked', async () => {
    const entries = await collect(readJsonlRecords(chunksOf([gzipSync('{"a":1}\n{"b":2}\n')]), { gzip: true }));
    expect(entries.map((e) => e.value)).toEqual([{ a: 1 }, { b: 2 }]);
  });
});

describe('writeJsonl / encodeJsonl', () => {
  it('writes gzip for .gz keys and reports lines, stored bytes and their sha256', async () => {
    const store = openStore(join(root, 'w1'));
    const records = Array.from({ length: 20_000 }, (_, i) => ({ i, domain: `d${i}.example`, note: 'ü' }));
    const result = await writeJsonl(store, 'job/parts/part-00000.jsonl.gz', records, { metadata: { kind: 'test' } });
    const stored = readFileSync(join(root, 'w1', 'job/parts/part-00000.jsonl.gz'));
    expect(result).toMatchObject({ key: 'job/parts/part-00000.jsonl.gz', lines: 20_000, bytes: stored.length });
    expect(result.sha256).toBe(createHash('sha256').update(stored).digest('hex'));
    expect(gunzipSync(stored).toString().split('\n')[1]).toBe('{"i":1,"domain":"d1.example","note":"ü"}');
    expect((await store.stat('job/parts/part-00000.jsonl.gz'))?.metadata).toEqual({ kind: 'test' });

    const back = await collect(readJsonl(await openDecoded(store, 'job/parts/part-00000.jsonl.gz')));
    expect(back.map((e) => e.value)).toEqual(records);
  });

  it('writes plain JSONL for other keys, from an async source', async () => {
    const store = openStore(join(root, 'w2'));
    async function* source() {
      yield { a: 1 };
      yield { b: [2] };
    }
    const result = await writeJsonl(store, 'x.jsonl', source());
    expect(result.lines).toBe(2);
    expect(await store.readText('x.jsonl')).toBe('{"a":1}\n{"b":[2]}\n');
  });

  it('publishes nothing when the record source fails', async () => {
    const store = openStore(join(root, 'w3'));
    async function* source() {
      for (let i = 0; i < 50_000; i++) yield { i };
      throw new Error('API went away');
    }
    await expect(writeJsonl(store, 'p/part-00001.jsonl.gz', source())).rejects.toThrow(/API went away/);
    expect(await store.exists('p/part-00001.jsonl.gz')).toBe(false);
  });

  it('refuses values JSON cannot encode', async () => {
    await expect(readAll(encodeJsonl([{ a: 1 }, undefined]))).rejects.toThrow(/cannot encode undefined/);
  });
});

describe('readCsvRecords', () => {
  it('yields records by header with row and line numbers, and malformed rows as errors in order', async () => {
    const csv = [
      'domain , name\r\n',
      'A.com,Alpha\n',
      '"b.com",Beta,extra\n',
      '\n',
      'c.com,"multi\nline"\n',
      '"bad"x,y\r\n',
      'd.com,Delta\n',
      '"open,z\n',
    ].join('');
    const entries = await collect(readCsvRecords(chunksOf([csv.slice(0, 37), csv.slice(37)])));
    expect(entries).toEqual([
      { row: 1, line: 2, record: { domain: 'A.com', name: 'Alpha' } },
      { row: 2, line: 3, error: expect.stringMatching(/columns length is 2, got 3/), raw: '"b.com",Beta,extra\n' },
      { row: 3, line: 4, error: 'blank line', raw: '\n' },
      { row: 4, line: 6, record: { domain: 'c.com', name: 'multi\nline' } },
      { row: 5, line: 7, record: { domain: '"bad"x', name: 'y' } },
      { row: 6, line: 8, record: { domain: 'd.com', name: 'Delta' } },
      { row: 7, line: 9, error: expect.stringMatching(/Quote Not Closed/), raw: '"open,z\n' },
    ]);
  });

  it('reads a one-column export with blanks, a BOM and gzip', async () => {
    const csv = '\uFEFFwebsite\nhttps://www.Example.com/\n\nexample.com\n';
    const entries = await collect(readCsvRecords(chunksOf([gzipSync(csv)]), { gzip: true }));
    expect(entries).toEqual([
      { row: 1, line: 2, record: { website: 'https://www.Example.com/' } },
      { row: 2, line: 3, record: { website: '' } },
      { row: 3, line: 4, record: { website: 'example.com' } },
    ]);
  });

  it('fails with an error naming the line when a quote never closes and would swallow the rows after it', async () => {
    const csv = 'domain\na.com\n"b.com\nc.com\nd.com\n';
    const seen: unknown[] = [];
    const read = (async () => {
      for await (const entry of readCsvRecords(chunksOf([csv]))) seen.push(entry);
    })();
    await expect(read).rejects.toBeInstanceOf(CsvInputError);
    await expect(read).rejects.toThrow(
      /^CSV line 3: a quote opened here is never closed; the rows after it cannot be read$/,
    );
    expect(seen).toEqual([{ row: 1, line: 2, record: { domain: 'a.com' } }]);
  });

  it('fails with an error naming the line when a record exceeds the size limit', async () => {
    const csv = `domain\na.com\n"${'x'.repeat(3000)}\nb.com\n`;
    await expect(collect(readCsvRecords(chunksOf([csv]), { maxRecordBytes: 1000 }))).rejects.toThrow(
      /^CSV line 3: a record grows beyond the size limit/,
    );
  });
});
