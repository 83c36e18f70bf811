/**
 * `load` proves a part (size and sha256) in a first read before decoding anything, then decodes it from a second
 * read: a part swapped between the two for other bytes of the same size is refused as its stream ends, so its
 * table's COPY fails (and the load's transaction rolls back), whichever way the part is converted.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeTable } from '../../../activities/tables/encode.ts';
import { openStore } from '../../../config/storage.ts';
import { PartChecksumError } from '../../../connectors/errors.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import type { TableRow } from '../../../contract/tables/columns.ts';
import { SIGNALS_TABLE } from '../../../contract/tables/signals.ts';
import type { LoadPart } from '../../../loader/manifest.ts';
import { type PartSource, tableSources } from '../../../loader/sources.ts';
import { signalsLoadTable } from '../../../loader/tables.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const KEY = 'job/tables/signals-00000.jsonl';

const rows = (text: string): TableRow[] =>
  Array.from({ length: 2000 }, (_, i) => ({ signal_id: `s${i}`, signal_type: 'news', summary: `${text} ${i}` }));

describe('load: a part swapped between its proof and its conversion', () => {
  const tempDir = useTempDir('part-swap');
  let genuine: Buffer;
  let swapped: Buffer;
  let part: LoadPart;

  beforeAll(() => {
    genuine = encodeTable('jsonl', SIGNALS_TABLE, rows('genuine'), 'none');
    // Other rows of the same length: the size the manifest lists still holds.
    swapped = encodeTable('jsonl', SIGNALS_TABLE, rows('planted'), 'none');
    expect(swapped.length).toBe(genuine.length);
    const sha256 = createHash('sha256').update(genuine).digest('hex');
    part = { key: KEY, bytes: genuine.length, sha256, table: 'signals', format: 'jsonl', lines: 2000 } as LoadPart;
  });

  /** The part's store, its bytes replaced by `swapped` once they have been read through once. */
  async function swappingStore(name: string): Promise<{ store: Store; reads: () => number }> {
    const path = join(tempDir(), name, KEY);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, genuine);
    const inner = openStore(pathToFileURL(join(tempDir(), name)).href);
    let reads = 0;
    const openRead = async (key: string) => {
      reads += 1;
      if (reads === 2) await writeFile(path, swapped);
      return inner.openRead(key);
    };
    const store = new Proxy(inner, {
      get: (target, name) => (name === 'openRead' ? openRead : Reflect.get(target, name)),
    });
    return { store, reads: () => reads };
  }

  async function copyText(store: Store, from: PartSource): Promise<string> {
    const open = tableSources({
      store,
      table: signalsLoadTable('t_', 'file:///manifest'),
      parts: [part],
      from,
      rowsOf: (lines) => lines.map((line) => JSON.parse(line)),
      manifestUrl: 'file:///manifest',
      finishedAt: '2026-01-01T00:00:00.000Z',
      count: { nul: 0 },
    });
    let text = '';
    for await (const source of open()) for await (const chunk of source.body) text += chunk.toString();
    return text;
  }

  for (const from of ['jsonl', 'lines'] as const) {
    it(`${from}: is refused naming the part, its sha256 differing, after both reads`, async () => {
      const { store, reads } = await swappingStore(`swap-${from}`);
      const error = await copyText(store, from).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(reads()).toBe(2);
      expect(error).toBeInstanceOf(PartChecksumError);
      expect((error as Error).message).toContain(`part ${KEY} does not match its manifest (its sha256 differs`);
    });
  }

  it('a part left as it was is converted whole, every line once', async () => {
    const inner = openStore(pathToFileURL(join(tempDir(), 'swap-jsonl')).href);
    await writeFile(join(tempDir(), 'swap-jsonl', KEY), genuine);
    const text = await copyText(inner, 'jsonl');
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2000);
    expect(lines[1999]?.startsWith('s1999\t')).toBe(true);
  });
});
