/**
 * Promise: a scheduled feed whose output refuses a paid answer for good (a full disk) stops before its next paid
 * call, and the stopped run's manifest counts the answer it could not save; the answer waits in the worker's spool,
 * and running the same run again once the output takes writes publishes it before any call, so each call is paid
 * once in all. Calls and credits are the sandbox's (its call record and ledger), never the kit's own counts.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedDir } from '../../activities/feeds/layout.ts';
import type { FeedManifest, FeedResult } from '../../activities/feeds/types.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { WorkerHandle } from '../../workers/worker.ts';
import { runIdOf } from '../../workflows/push-ids.ts';
import type { ScheduledFeedInput } from '../../workflows/scheduled-feed.ts';
import { startRefusingWorker } from '../helpers/refusing-store.ts';
import { rejectionOf } from '../helpers/workflow-failure.ts';
import { feedKey } from './feed-oracle.ts';
import { runOnEnvQueues } from './helpers.ts';
import { chargedSince } from './oracle.ts';
import { DAY, FIRST_RUN_AT } from './push-helpers.ts';

/** A feed run's saved answers (its manifest, lines and call markers are still written). */
const isAnswerKey = (key: string) => /\/work\/run-[^/]+\/answer-\d+\.json$/.test(key);

const ISO = (ms: number) => new Date(ms).toISOString();

describe('promise: a feed answer the output refused is not paid for again', () => {
  let env: JobEnv;
  let worker: WorkerHandle | undefined;
  let refusing = false;
  const now = FIRST_RUN_AT + 60 * DAY;
  let store: Store;
  let output: string;

  beforeAll(async () => {
    env = await startJobEnv({
      sandbox: { seed: 23, clock: () => now, intentSurfacing: { from: FIRST_RUN_AT - DAY, days: 40, share: 0.4 } },
    });
    worker = await startRefusingWorker(env, 'feed-spool', isAnswerKey, () => refusing);
    output = `file://${await tempDir('feed-spooled')}`;
    store = openStore(output);
  });
  afterAll(async () => {
    await worker?.shutdown();
    await env?.stop();
    await removeTempDirs();
  });

  type Feed = Omit<ScheduledFeedInput, 'taskQueue' | 'apiTaskQueue' | 'output' | 'runAt'>;
  const runFeed = (id: string, input: Feed, runAt = ISO(now)) =>
    runOnEnvQueues<FeedResult>(env, 'scheduledFeed', id, { ...input, output, runAt, concurrency: 1 });
  const manifestOf = async (name: string, kind: FeedKind) =>
    JSON.parse(
      await store.readText(
        `${name}/${feedDir(kind)}/dt=${ISO(now).slice(0, 10)}/run-${runIdOf(ISO(now))}/_manifest.json`,
      ),
    ) as FeedManifest;
  async function linesOf(manifest: FeedManifest): Promise<Record<string, unknown>[]> {
    const lines: Record<string, unknown>[] = [];
    for (const part of manifest.parts.filter((p) => p.table === 'lines')) {
      const chunks: Buffer[] = [];
      for await (const chunk of await store.openRead(part.key)) chunks.push(chunk as Buffer);
      const text = gunzipSync(Buffer.concat(chunks)).toString('utf8').split('\n').filter(Boolean);
      lines.push(...text.map((line) => JSON.parse(line) as Record<string, unknown>));
    }
    return lines;
  }

  /**
   * Runs `feed` with its answers refused (it must stop), then again with the output fixed (as `next`: the same run
   * again, or the feed's next run at its own time); checks both manifests.
   */
  async function stoppedThenRerun(id: string, feed: Feed, path: string, next = { id, runAt: ISO(now) }) {
    const mark = env.sandbox.truth.lastCall();
    refusing = true;
    const failure = await rejectionOf(runFeed(id, feed));
    refusing = false;
    expect(String((failure as { cause?: unknown } | undefined)?.cause)).toMatch(/refused \(ENOSPC\)/);
    // Stopped before the next paid call: the first call and none after it.
    const [refused, ...after] = env.sandbox.truth.calls({ after: mark });
    expect(after).toEqual([]);
    expect(refused?.path).toBe(path);
    expect(refused?.credits).toBeGreaterThan(0);
    // The stopped run's manifest says what was charged for the answer it could not save.
    const stopped = await manifestOf(feed.name, feed.kind);
    expect(stopped.status).toBe('failed');
    expect(stopped.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(stopped.unsaved_answers).toEqual({ credits: chargedSince(env.sandbox, mark), unknown_calls: 0 });

    const result = await runFeed(next.id, feed, next.runAt);
    expect(result.status).toBe('completed');
    // The stopped run is the one finished (its folder, its id), whichever run did it.
    expect(result.runId).toBe(runIdOf(ISO(now)));
    const manifest = await manifestOf(feed.name, feed.kind);
    expect(manifest.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
    return { mark, manifest, lines: await linesOf(manifest) };
  }

  it('intent-contacts: stops after the refused page, and the next run finishes it and pays each page once', async () => {
    const filters = { topic_ids: ['b2b_17', 'b2b_4242', 'b2b_30001'] };
    const pageSize = 40;
    const truth = env.sandbox.truth.intentContacts({ ...filters });
    expect(truth.length).toBeGreaterThan(pageSize);
    const { mark, lines } = await stoppedThenRerun(
      'intent-spooled',
      { name: 'intent-spooled', kind: 'intent-contacts', filters, pageSize },
      '/v1/buyer-intent/contacts',
      { id: 'intent-spooled-2', runAt: ISO(now + 3_600_000) },
    );
    // Each page paid once in all (the first page's answer was published from the spool), 1 credit per contact.
    const calls = env.sandbox.truth.calls({ after: mark });
    expect(calls.filter((c) => c.path === '/v1/buyer-intent/contacts')).toHaveLength(calls.length);
    expect(calls).toHaveLength(Math.ceil(truth.length / pageSize));
    expect(chargedSince(env.sandbox, mark)).toBe(truth.length);
    // Every contact showing intent delivered once (the truth may hold a contact more than once per topic).
    const keys = (items: Record<string, unknown>[]) => items.map((item) => feedKey('intent-contacts', item));
    expect(new Set(keys(lines)).size).toBe(lines.length);
    expect(new Set(keys(lines))).toEqual(new Set(keys(truth as unknown as Record<string, unknown>[])));
  });

  it.each([
    ['the same run again', 'news-rerun', false],
    ['the next run, at its own time', 'news-next', true],
  ])(
    'company-search: stops before splitting the refused capped answer; %s pays in all what an unrefused run pays',
    async (_, name, later) => {
      const filters = { signal_types: ['news'], employee_count_min: 0, employee_count_max: 1_000_000 };
      const since = ISO(now - 60 * DAY);
      const truth = env.sandbox.truth.companySearch({ ...filters, detected_after: since });
      expect(truth.length).toBeGreaterThan(100);
      // The ideal: the calls and charges of the same feed never refused (another name, the sandbox's clock unmoved).
      const control = env.sandbox.truth.lastCall();
      await runFeed(`${name}-control`, { name: `${name}-control`, kind: 'company-search', filters, since });
      const ideal = env.sandbox.truth.calls({ after: control });
      expect(ideal.length).toBeGreaterThan(1);

      const feed: Feed = { name, kind: 'company-search', filters, since };
      const next = later ? { id: `${name}-2`, runAt: ISO(now + 3_600_000) } : { id: name, runAt: ISO(now) };
      const { mark, lines } = await stoppedThenRerun(name, feed, '/v1/companies/search', next);
      const calls = env.sandbox.truth.calls({ after: mark });
      expect(calls.map((c) => c.path).sort()).toEqual(ideal.map((c) => c.path).sort());
      expect(chargedSince(env.sandbox, mark)).toBe(ideal.reduce((sum, c) => sum + c.credits, 0));
      expect(new Set(lines.map((line) => line['domain']))).toEqual(new Set(truth.map((c) => c.domain)));
      if (later) {
        // Finished and committed: the run after it is a run of its own, with nothing new to deliver.
        const third = await runFeed(`${name}-3`, feed, ISO(now + 7_200_000));
        expect(third.runId).toBe(runIdOf(ISO(now + 7_200_000)));
        expect(third.new).toBe(0);
      }
    },
  );
});
