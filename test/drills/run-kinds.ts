/**
 * The three kinds of scheduled run as the drills start and judge them: a push, a feed run (buyer intent, paged) and a
 * night of the CRM sync. Each is started on the environment's queues with its workflow tasks timing out after 3 s (a
 * stopped worker's go to another within seconds), and judged against the sandbox's truth alone: every input
 * accounted for once in the output, and the spec's price of what the run saved, never the kit's own counts.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'vitest';
import type { FeedResult } from '../../activities/feeds/types.ts';
import type { PushResult } from '../../activities/push/types.ts';
import type { SyncResult } from '../../activities/sync/types.ts';
import { openStore } from '../../config/storage.ts';
import type { DrillInput } from '../../testkit/drill-input.ts';
import type { JobEnv } from '../../testkit/job-env.ts';
import { readCsv, writeExport } from '../promises/crm-sync-helpers.ts';
import { readFeedRun } from '../promises/feed-helpers.ts';
import { feedKey } from '../promises/feed-oracle.ts';
import { newSignals, PATHS } from '../promises/oracle.ts';
import { DAY, readPushRun } from '../promises/push-helpers.ts';

export type RunKind = 'push' | 'feed' | 'sync';

/** Calls in flight at once in a push run and a sync night (a feed pages one call at a time). */
export const RUN_CONCURRENCY = 2;

export interface UnsavedCount {
  credits: number;
  unknown_calls: number;
}

/** What the run's manifest says it was charged, and what the spec charges for what it saved (the truth). */
export interface JudgedRun {
  creditsCharged: number;
  unsaved: UnsavedCount;
  /** The spec's price of the answers the output holds, from the sandbox's truth. */
  ideal: number;
}

export interface DrillRun {
  workflowId: string;
  /** The path of its paid calls. */
  paidPath: string;
  /** Its finalize activity: the one that waits for answers still on their way. */
  finalizeActivity: string;
  /** Paid calls it makes at most at once. */
  concurrency: number;
  start(): Promise<WorkflowHandle>;
  /** Checks the finished run's output against the truth (every input once) and says what its manifest charged. */
  judge(result: unknown): Promise<JudgedRun>;
}

const ISO = (ms: number) => new Date(ms).toISOString();

/** Buyer intent topics whose contacts, 20 a page, take a few pages. */
const FEED_FILTERS = { topic_ids: ['b2b_17', 'b2b_4242', 'b2b_30001'] };
const FEED_PAGE_SIZE = 20;
/** Signals per company a sync night asks. */
const SYNC_LIMIT = 5;

/**
 * A run of `kind` as `id`, at the sandbox's time `now`, written under `dir`: a push over `watchlist` (a CRM-like CSV
 * with duplicates and junk rows), a feed of three intent topics, a sync night over an export of `records` accounts.
 */
export async function drillRun(
  kind: RunKind,
  env: JobEnv,
  options: { id: string; dir: string; now: number; watchlist: DrillInput; records: number },
): Promise<DrillRun> {
  const { id, dir, now } = options;
  const output = pathToFileURL(join(dir, id)).href;
  const store = openStore(output);
  const c = env.config();
  const start = (workflow: string, input: object) =>
    env.client.workflow.start(workflow, {
      workflowId: id,
      taskQueue: c.taskQueue,
      workflowTaskTimeout: 3_000,
      args: [{ ...input, output, runAt: ISO(now), taskQueue: c.taskQueue, apiTaskQueue: c.apiTaskQueue }],
    });
  const common = { workflowId: id, concurrency: RUN_CONCURRENCY };

  if (kind === 'push') {
    const { watchlist } = options;
    const since = ISO(now - 30 * DAY);
    const truth = newSignals(env.sandbox, [...watchlist.distinct], { detected_after: since });
    expect(truth.ids.length).toBeGreaterThan(0);
    return {
      ...common,
      paidPath: PATHS.enrichBulk,
      finalizeActivity: 'finalizePushRun',
      start: () => start('scheduledPush', { name: id, watchlist: watchlist.url, since, concurrency: RUN_CONCURRENCY }),
      async judge(result) {
        const { manifest, lines } = await readPushRun(store, result as PushResult);
        // Every new signal of every distinct domain once; every junk row named; every domain answered.
        const written = lines.map((line) => line.signal_id);
        expect(new Set(written).size).toBe(written.length);
        expect(written.sort()).toEqual([...truth.ids].sort());
        expect(manifest.counts.distinct).toBe(watchlist.distinct.size);
        expect(manifest.counts.ok + manifest.counts.not_found).toBe(watchlist.distinct.size);
        expect(manifest.invalid_rows.map((row) => row.row).sort((a, b) => a - b)).toEqual(watchlist.invalidRows);
        expect(manifest.overlap.credits).toBe(0);
        return { creditsCharged: manifest.credits_charged, unsaved: unsavedOf(manifest), ideal: 2 * truth.ids.length };
      },
    };
  }

  if (kind === 'feed') {
    const truth = env.sandbox.truth.intentContacts({ ...FEED_FILTERS });
    expect(truth.length).toBeGreaterThan(3 * FEED_PAGE_SIZE);
    const feed = { name: id, kind: 'intent-contacts', filters: FEED_FILTERS, pageSize: FEED_PAGE_SIZE };
    return {
      ...common,
      concurrency: 1,
      paidPath: '/v1/buyer-intent/contacts',
      finalizeActivity: 'finalizeFeedRun',
      start: () => start('scheduledFeed', feed),
      async judge(result) {
        const { manifest, lines } = await readFeedRun(store, 'intent-contacts', result as FeedResult);
        // Every person showing intent on each topic once (the service may return one twice).
        const keys = lines.map((line) => feedKey('intent-contacts', line));
        expect(new Set(keys).size).toBe(keys.length);
        const expected = truth.map((item) => feedKey('intent-contacts', item as unknown as Record<string, unknown>));
        expect(keys.sort()).toEqual([...new Set(expected)].sort());
        // 1 credit per contact returned (spec 8).
        return { creditsCharged: manifest.credits_charged, unsaved: unsavedOf(manifest), ideal: truth.length };
      },
    };
  }

  const records = Array.from({ length: options.records }, (_, i) => ({
    id: `${id}-${i}`,
    website: `${id}-co${i}.com`,
    industry: 'x',
  }));
  const input = await writeExport(dir, records);
  const truth = env.sandbox.truth.companySignals(records.map((record) => record.website));
  const byDomain = new Map(truth.map((t) => [t.domain, t]));
  return {
    ...common,
    paidPath: PATHS.enrichBulk,
    finalizeActivity: 'finalizeSyncRun',
    start: () => start('crmSync', { name: id, kind: 'enrich', input, limit: SYNC_LIMIT, concurrency: RUN_CONCURRENCY }),
    async judge(result) {
      const night = result as SyncResult;
      // Every record once, with its company's picture.
      const rows = await readCsv(store, night.rowsUrl);
      expect(rows.map((row) => row['record_id']).sort()).toEqual(records.map((record) => record.id).sort());
      for (const row of rows) {
        const t = byDomain.get(row['domain']!)!;
        expect(row['status'], row['record_id']).toBe(t.status);
        if (t.status === 'ok') expect(Number(row['signal_count']), row['domain']).toBe(signalsBought(t.signals));
      }
      const manifest = JSON.parse(await store.readText(night.manifestUrl.slice(store.url.length + 1))) as {
        credits_charged: number;
        unsaved_answers: UnsavedCount;
      };
      const ideal = truth.reduce((sum, t) => sum + 2 * signalsBought(t.signals), 0);
      return { creditsCharged: manifest.credits_charged, unsaved: manifest.unsaved_answers, ideal };
    },
  };
}

const signalsBought = (signals: readonly unknown[]) => Math.min(SYNC_LIMIT, signals.length);

function unsavedOf(manifest: { unsaved_answers?: UnsavedCount | undefined }): UnsavedCount {
  return manifest.unsaved_answers ?? { credits: 0, unknown_calls: 0 };
}
