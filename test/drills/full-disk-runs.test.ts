/**
 * Drill: the disk holding a scheduled run's output fills up mid-run, for a push run, a feed run and a night of the
 * CRM sync, on a one-disk worker (its spool on that same disk). The run's first paid answer is held at the proxy
 * until the disk is full, so the sandbox has charged for it when the output refuses it. The run stops before its
 * next paid call and fails; its manifest says what the sandbox charged (its ledger), the refused answer counted as
 * unsaved, also for a sync night, whose CRM files do not fit beside it (it writes its manifest first). Once space is freed, the next run on the same worker publishes the kept answer instead of buying it
 * again: over both runs the ledger holds exactly what one unrefused run pays (the sandbox's truth), and the final
 * manifest says what was charged.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { fillDisk, mountSmallDisk, type SmallDisk } from '../../testkit/full-disk.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import { until } from '../../testkit/kill-drill.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { rejectionOf } from '../helpers/workflow-failure.ts';
import { runSync, writeExport } from '../promises/crm-sync-helpers.ts';
import { runOnEnvQueues } from '../promises/helpers.ts';
import { BULK_DOMAINS, chargedSince, newSignals, PATHS } from '../promises/oracle.ts';
import { DAY, FIRST_RUN_AT, runPush, writeWatchlist } from '../promises/push-helpers.ts';

const NOW = FIRST_RUN_AT + 60 * DAY;
const ISO = (ms: number) => new Date(ms).toISOString();
/**
 * Left free on the full disk: less than a paid answer needs, enough for the failed run's manifest (a sync night's is
 * the first file it writes; its CRM files, which do not fit, come after it).
 */
const ROOM = 8 * 1024;

type Kind = 'push' | 'feed' | 'sync';

interface Manifest {
  status: string;
  credits_charged: number;
  unsaved_answers: { credits: number; unknown_calls: number };
  parts: { key: string; bytes: number }[];
}

/** One kind of run on the drill's disk: how to run it (the stopped run, then the run after the disk is freed). */
interface DrillRun {
  /** The path of its paid calls. */
  path: string;
  /** What one run never refused pays (the sandbox's truth). */
  ideal: number;
  first(): Promise<unknown>;
  rerun(): Promise<unknown>;
}

describe('drill: the output disk fills up mid-run, for a push, a feed and a sync night', () => {
  let env: JobEnv;
  let proxy: ApiProxy;
  let worker: WorkerHandle | undefined;
  let small: SmallDisk | undefined;
  let disk: string;

  beforeAll(async () => {
    env = await startJobEnv({
      sandbox: { seed: 23, clock: () => NOW, intentSurfacing: { from: FIRST_RUN_AT - DAY, days: 40, share: 0.4 } },
    });
    proxy = await startApiProxy(env.sandbox.url);
    small = mountSmallDisk(join(await tempDir('full-disk-runs'), 'disk'), '16m');
    disk = small.path;
    worker = await env.startWorker({ url: proxy.url, spoolDir: join(disk, 'spool') });
  });
  afterAll(async () => {
    proxy?.releaseAnswers();
    await worker?.shutdown();
    await proxy?.stop();
    await env?.stop();
    small?.unmount();
    await removeTempDirs();
  });

  /** Its inputs beside the disk, its output on it. */
  async function drillRun(kind: Kind): Promise<DrillRun> {
    const dir = await tempDir(`full-disk-${kind}`);
    const output = pathToFileURL(join(disk, kind)).href;
    if (kind === 'push') {
      // One and a half bulk calls: a second batch is left to pay for when the first answer is refused.
      const domains = Array.from({ length: BULK_DOMAINS + BULK_DOMAINS / 2 }, (_, i) => `disk-co${i}.com`);
      const since = ISO(NOW - 30 * DAY);
      const truth = newSignals(env.sandbox, domains, { detected_after: since });
      expect(truth.ids.length).toBeGreaterThan(0);
      const watchlist = await writeWatchlist(dir, ['domain', ...domains]);
      const input = { name: 'disk', watchlist, output, since, runAt: ISO(NOW), concurrency: 1 };
      const run = () => runPush(env, 'full-disk-push', input);
      return { path: PATHS.enrichBulk, ideal: 2 * truth.ids.length, first: run, rerun: run };
    }
    if (kind === 'feed') {
      const filters = { topic_ids: ['b2b_17', 'b2b_4242', 'b2b_30001'] };
      const pageSize = 40;
      const truth = env.sandbox.truth.intentContacts({ ...filters });
      expect(truth.length).toBeGreaterThan(pageSize);
      const feed = { name: 'disk', kind: 'intent-contacts', filters, pageSize, output, concurrency: 1 };
      const run = (id: string, at: number) => runOnEnvQueues(env, 'scheduledFeed', id, { ...feed, runAt: ISO(at) });
      return {
        path: '/v1/buyer-intent/contacts',
        ideal: truth.length,
        first: () => run('full-disk-feed', NOW),
        // The feed's next run, at its own time, finishes the stopped one first.
        rerun: () => run('full-disk-feed-2', NOW + 3_600_000),
      };
    }
    const limit = 5;
    const records = Array.from({ length: 150 }, (_, i) => ({
      id: `d-${i}`,
      website: `disk-sync${i}.com`,
      industry: 'x',
    }));
    const night = { name: 'disk', kind: 'enrich' as const, input: await writeExport(dir, records), output, limit };
    const truth = env.sandbox.truth.companySignals(records.map((r) => r.website));
    return {
      path: PATHS.enrichBulk,
      ideal: truth.reduce((sum, t) => sum + 2 * t.signals.slice(0, limit).length, 0),
      first: () => runSync(env, 'full-disk-sync-0', { ...night, concurrency: 1, runAt: ISO(NOW) }),
      // The next night takes the kept answer in first.
      rerun: () => runSync(env, 'full-disk-sync-1', { ...night, concurrency: 1, runAt: ISO(NOW + 60_000) }),
    };
  }

  /** The run manifests under the kind's output, by key. */
  async function manifests(kind: Kind): Promise<Map<string, Manifest>> {
    const found = new Map<string, Manifest>();
    const names = await readdir(join(disk, kind), { recursive: true });
    for (const name of names.filter((n) => n.endsWith('_manifest.json')).sort()) {
      found.set(name, JSON.parse(await readFile(join(disk, kind, name), 'utf8')) as Manifest);
    }
    return found;
  }

  it.each<Kind>(['push', 'feed', 'sync'])(
    '%s: fails saying what was charged, and the run after space is freed pays for nothing again',
    async (kind) => {
      const run = await drillRun(kind);
      expect(run.ideal).toBeGreaterThan(0);
      const mark = env.sandbox.truth.lastCall();

      proxy.holdAnswers();
      const first = rejectionOf(run.first());
      await until('the first paid answer', () => proxy.heldAnswers() > 0, 120_000);
      const ballast = await fillDisk(disk, ROOM);
      proxy.releaseAnswers();
      const failure = await first;
      expect(String((failure as { cause?: unknown } | undefined)?.cause)).toMatch(/ENOSPC/);
      const chargedFirst = chargedSince(env.sandbox, mark);
      // Stopped before its next paid call: the held call and none after it.
      const [held, ...after] = env.sandbox.truth.calls({ after: mark });
      expect(after).toEqual([]);
      expect(held?.path).toBe(run.path);
      expect(chargedFirst).toBe(held?.credits);
      expect(chargedFirst).toBeGreaterThan(0);
      // Its manifest says what the sandbox charged, the refused answer counted as unsaved.
      const failed = await manifests(kind);
      expect(failed.size).toBe(1);
      const [stoppedKey = ''] = failed.keys();
      const stopped = [...failed.values()];
      expect(stopped.map((m) => m.status)).toEqual(['failed']);
      expect(stopped[0]?.credits_charged).toBe(chargedFirst);
      expect(stopped[0]?.unsaved_answers).toEqual({ credits: chargedFirst, unknown_calls: 0 });
      // It names only files that are there (a sync night's CRM files did not fit: it names none).
      for (const part of stopped[0]?.parts ?? [])
        expect((await stat(join(disk, kind, part.key))).size).toBe(part.bytes);
      // No write left half a file in the spool.
      const spooled = await readdir(join(disk, 'spool'), { recursive: true });
      expect(spooled.filter((name) => name.endsWith('.tmp'))).toEqual([]);

      // Space is freed; the next run on the same worker.
      await rm(ballast);
      await run.rerun();
      // The refused answer was published, not bought again: in all, what one unrefused run pays.
      expect(chargedSince(env.sandbox, mark)).toBe(run.ideal);
      const all = await manifests(kind);
      // A push or feed run is finished under its own id; a failed sync night stays as it was (never committed), the
      // next night carrying its answer on.
      const finished = [...all.entries()].filter(([key]) => kind !== 'sync' || key !== stoppedKey);
      if (kind === 'sync') expect(all.get(stoppedKey)).toEqual(stopped[0]);
      expect(finished.length).toBeGreaterThan(0);
      for (const [, manifest] of finished) {
        expect(manifest.status).toMatch(/^completed/);
        expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
      }
      // What the manifests say was charged is the ledger's: each paid answer counted once.
      const said = [...all.values()].reduce((sum, m) => sum + m.credits_charged, 0);
      expect(said).toBe(chargedSince(env.sandbox, mark));
    },
  );
});
