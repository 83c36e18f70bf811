import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watermarksKey } from '../../../activities/run/scheduled-layout.ts';
import {
  commitWatermarkState,
  type KeyOutcome,
  readWatermarkState,
  resetWatermarkState,
} from '../../../activities/state/watermarks.ts';
import { openStore } from '../../../config/storage.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-watermarks-'));
let count = 0;
const freshStore = () => openStore(join(root, `store-${count++}`));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const marks = (entries: Record<string, string>) =>
  new Map(Object.entries(entries).map(([domain, through]): [string, KeyOutcome] => [domain, { through, pushed: [] }]));
const commitWatermarks = (
  store: ReturnType<typeof freshStore>,
  name: string,
  runId: string,
  outcomes: Map<string, KeyOutcome>,
  shardSize?: number,
) => commitWatermarkState(store, name, runId, outcomes, shardSize ? { shardSize } : {});
const readWatermarks = readWatermarkState;

describe('watermarks', () => {
  it('start empty and keep, per domain, the later of the stored and the committed time', async () => {
    const store = freshStore();
    expect(await readWatermarks(store, 'p')).toEqual({
      marks: new Map(),
      pushed: new Map(),
      covered: new Map(),
      runId: null,
      lookbackMs: 0,
    });

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

  it('keeps pushed signals per domain, and a reset forgets one domain or all of them', async () => {
    const store = freshStore();
    const outcomes = marks({ 'a.com': '2026-03-01T10:00:00Z', 'b.com': '2026-03-01T10:00:00Z' });
    outcomes.set('c.com', { through: null, pushed: [['sig_1', '2026-03-02T00:00:00Z']] });
    const lastRun = {
      run_id: 'r1',
      status: 'completed_with_errors',
      mode: 'incremental',
      manifest: 'm',
      finished_at: 'f',
      signals: 1,
      credits: 2,
      overlap_credits: 0,
      calls: 1,
      incomplete: 1,
      incomplete_domains: ['c.com'],
    };
    await commitWatermarkState(store, 'p', 'r1', outcomes, { lastRun });
    const read = await readWatermarkState(store, 'p');
    expect(read.pushed.get('c.com')).toEqual([['sig_1', '2026-03-02T00:00:00Z']]);
    expect(read.marks.has('c.com')).toBe(false);
    expect(read.lastRun).toEqual(lastRun);

    expect(await resetWatermarkState(store, 'p', ['a.com', 'c.com', 'x.com'])).toEqual({ removed: 1, remaining: 1 });
    const after = await readWatermarkState(store, 'p');
    expect([...after.marks.keys()]).toEqual(['b.com']);
    expect(after.pushed.size).toBe(0);
    expect(after.lastRun).toEqual(lastRun);
    expect(await resetWatermarkState(store, 'p')).toEqual({ removed: 1, remaining: 0 });
    expect((await readWatermarkState(store, 'p')).marks.size).toBe(0);
  });

  it('shards a large set behind one pointer and removes shards no commit uses any more', async () => {
    const store = freshStore();
    const many = (n: number, at: string) =>
      marks(Object.fromEntries(Array.from({ length: n }, (_, i) => [`d${i}.com`, at])));
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
