import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openScratch } from '../../../activities/run/part-files.ts';
import { resumableFeedRun, uncommittedSyncRun } from '../../../activities/state/stopped-run.ts';
import { openSyncState, readSyncPointer } from '../../../activities/state/sync-state.ts';
import { readWatermarkState } from '../../../activities/state/watermarks.ts';
import { openStore } from '../../../config/storage.ts';

// Every state file below is written byte for byte as the release before the one incremental-state module wrote it
// (activities/run/watermarks.ts, activities/sync/state.ts, feeds/plan.ts and the sync's plan): an upgrade reads each.

const root = mkdtempSync(join(tmpdir(), 'signal-kit-old-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const freshStore = () => openStore(join(root, `store-${count++}`));
const PRINT = '0123456789abcdef0123456789abcdef';
const json = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`;

const pushLastRun = {
  run_id: '20260301T000000Z',
  status: 'completed',
  mode: 'incremental',
  manifest: 'nightly/runs/dt=2026-03-01/run-20260301T000000Z/_manifest.json',
  finished_at: '2026-03-01T00:04:00.000Z',
  signals: 12,
  credits: 40,
  overlap_credits: 2,
  calls: 3,
  incomplete: 1,
  incomplete_domains: ['slow.example'],
};

const syncLastRun = {
  run_id: '20260301T020000Z',
  status: 'completed',
  manifest: 'crm/runs/dt=2026-03-01/run-20260301T020000Z/_manifest.json',
  finished_at: '2026-03-01T02:05:00.000Z',
  credits: 17,
  calls: 2,
  new_signals: 5,
  records: { total: 3, new: 1, changed: 1, unchanged: 1, gone: 0 },
};

const acme = {
  status: 'ok',
  through: '2026-03-01T02:00:00.000Z',
  company: { name: 'Acme', domain: 'acme.com' },
  counts: { hiring: 2 },
  newest: { signal_id: 's2', signal_type: 'hiring', detected_at: '2026-02-27T10:00:00.000Z' },
  ids: [
    ['s1', '2026-02-20T10:00:00.000Z'],
    ['s2', '2026-02-27T10:00:00.000Z'],
  ],
};

describe('state files of the release before', () => {
  it("a push's _watermarks.json: its watermarks, remembered signals and last run", async () => {
    const store = freshStore();
    await store.writeText(
      'nightly/_watermarks.json',
      json({
        version: 2,
        name: 'nightly',
        run_id: pushLastRun.run_id,
        updated_at: '2026-03-01T00:04:01.000Z',
        count: 2,
        domains: { 'acme.com': '2026-03-01T00:00:00.000Z', 'slow.example': '2026-02-20T00:00:00.000Z' },
        pushed: { 'acme.com': [['s9', '2026-02-28T09:00:00.000Z']] },
        last_run: pushLastRun,
      }),
    );
    const state = await readWatermarkState(store, 'nightly');
    expect(Object.fromEntries(state.marks)).toEqual({
      'acme.com': '2026-03-01T00:00:00.000Z',
      'slow.example': '2026-02-20T00:00:00.000Z',
    });
    expect(state.pushed.get('acme.com')).toEqual([['s9', '2026-02-28T09:00:00.000Z']]);
    expect(state.runId).toBe(pushLastRun.run_id);
    expect(state.lastRun).toEqual(pushLastRun);
  });

  it("a sync's _state.json with its last run, pointing at a state object of the release before the database", async () => {
    const store = freshStore();
    const runId = syncLastRun.run_id;
    const key = `crm/_state/run-${runId}.json.gz`;
    await store.writeText(
      'crm/_state.json',
      json({
        version: 1,
        name: 'crm',
        run_id: runId,
        key,
        updated_at: '2026-03-01T02:05:01.000Z',
        companies: 1,
        previous: null,
        last_run: syncLastRun,
      }),
    );
    const object = {
      version: 1,
      run_id: runId,
      companies: { 'acme.com': acme },
      records: { 'id:001': PRINT },
      resolved: {},
    };
    await store.writeBytes?.(key, gzipSync(JSON.stringify(object)), { contentType: 'application/gzip' });

    expect((await readSyncPointer(store, 'crm'))?.last_run).toEqual(syncLastRun);
    const scratch = await openScratch();
    try {
      const state = await openSyncState(store, scratch, 'crm', '2026-03-02T02:00:00.000Z');
      try {
        expect(state.ignored).toBeUndefined();
        expect(state.runId).toBe(runId);
        expect(state.db.company('acme.com')).toMatchObject({
          through: acme.through,
          counts: { hiring: 2 },
          ids: acme.ids,
        });
        expect(state.db.recordPrint('id:"001"')).toBe(PRINT);
      } finally {
        state.db.close();
      }
    } finally {
      await scratch.close();
    }
  });

  it("a feed's _stopped.json: the stopped run is resumed while the feed and its state are unchanged", async () => {
    const store = freshStore();
    await store.writeText(
      'feed/work/_stopped.json',
      JSON.stringify({
        run_id: '20260301T000000Z',
        scheduled_at: '2026-03-01T00:00:00.000Z',
        state_from: null,
        feed: 'h1',
      }),
    );
    expect(await resumableFeedRun(store, 'feed', 'h1')).toBe('2026-03-01T00:00:00.000Z');
    expect(await resumableFeedRun(store, 'feed', 'another feed')).toBeNull();
  });

  it("a sync's _open-run.json: a night that planned and never committed is carried on", async () => {
    const store = freshStore();
    await store.writeText('crm/_open-run.json', JSON.stringify({ run_id: '20260302T020000Z' }));
    expect(await uncommittedSyncRun(store, 'crm', '20260303T020000Z')).toBe('20260302T020000Z');
    expect(await uncommittedSyncRun(store, 'crm', '20260302T020000Z')).toBeUndefined();
  });
});
