import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watermarksKey } from '../../../activities/push/layout.ts';
import { commitWatermarks, readWatermarks } from '../../../activities/push/watermarks.ts';
import { openStore } from '../../../connectors/storage/index.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-watermarks-'));
let count = 0;
const freshStore = () => openStore(join(root, `store-${count++}`));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const marks = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('watermarks', () => {
  it('start empty and keep, per domain, the later of the stored and the committed time', async () => {
    const store = freshStore();
    expect(await readWatermarks(store, 'p')).toEqual({ marks: new Map(), runId: null });

    const first = await commitWatermarks(
      store,
      'p',
      'r1',
      marks({ 'a.com': '2026-03-01T10:00:00Z', 'b.com': '2026-03-02T10:00:00+00:00' }),
    );
    expect(first).toEqual({ advanced: 2, count: 2 });
    // A late retry of an older run cannot move a domain back; a newer time moves it forward.
    const second = await commitWatermarks(
      store,
      'p',
      'r0',
      marks({ 'a.com': '2026-02-01T00:00:00Z', 'b.com': '2026-03-03T00:00:00.500Z', 'c.com': '2026-01-01T00:00:00Z' }),
    );
    expect(second).toEqual({ advanced: 2, count: 3 });
    const read = await readWatermarks(store, 'p');
    expect(read.runId).toBe('r0');
    expect(Object.fromEntries(read.marks)).toEqual({
      'a.com': '2026-03-01T10:00:00.000Z',
      'b.com': '2026-03-03T00:00:00.500Z',
      'c.com': '2026-01-01T00:00:00.000Z',
    });
  });

  it('does not rewrite the file when nothing advances', async () => {
    const store = freshStore();
    await commitWatermarks(store, 'p', 'r1', marks({ 'a.com': '2026-03-01T10:00:00Z' }));
    const before = await store.readText(watermarksKey('p'));
    const again = await commitWatermarks(store, 'p', 'r2', marks({ 'a.com': '2026-03-01T10:00:00.000Z' }));
    expect(again.advanced).toBe(0);
    expect(await store.readText(watermarksKey('p'))).toBe(before);
  });

  it('shards a large set behind one pointer and removes shards no commit uses any more', async () => {
    const store = freshStore();
    const many = (n: number, at: string) => new Map(Array.from({ length: n }, (_, i) => [`d${i}.com`, at]));
    await commitWatermarks(store, 'big', 'r1', many(25, '2026-03-01T00:00:00Z'), 10);
    const pointer = JSON.parse(await store.readText(watermarksKey('big'))) as { shards: string[]; domains?: unknown };
    expect(pointer.shards).toHaveLength(3);
    expect(pointer.domains).toBeUndefined();
    expect((await readWatermarks(store, 'big')).marks.size).toBe(25);

    await commitWatermarks(store, 'big', 'r2', many(25, '2026-03-02T00:00:00Z'), 10);
    await commitWatermarks(store, 'big', 'r3', many(30, '2026-03-03T00:00:00Z'), 10);
    const read = await readWatermarks(store, 'big');
    expect(read.runId).toBe('r3');
    expect(read.marks.size).toBe(30);
    expect(new Set(read.marks.values())).toEqual(new Set(['2026-03-03T00:00:00.000Z']));
    const shards: string[] = [];
    for await (const info of store.list('big/_watermarks/')) shards.push(info.key);
    // r3's shards and r2's (a reader of the previous pointer may still be reading them); r1's are gone.
    expect(shards.filter((key) => key.includes('run-r1/'))).toEqual([]);
    expect(shards.filter((key) => key.includes('run-r3/'))).toHaveLength(3);
    expect(shards.filter((key) => key.includes('run-r2/'))).toHaveLength(3);
  });
});
