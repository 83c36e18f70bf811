/**
 * Scheduled feeds keep their promises over three runs with the clock moving, checked against the sandbox's truth
 * (its uncapped search and every intent contact, its call record and charges), never the feed's own counts:
 * - nothing new is missed: after each run, every company or contact that matches has been delivered with its
 *   newest matching signal (search), or every contact showing intent has been delivered (buyer intent);
 * - nothing is delivered twice: no company/contact with the same newest signal (search), or the same topic and
 *   person (intent), in two lines of any runs;
 * - a capped search is split until every slice fits, or the run names what it could not complete;
 * - the credits a manifest reports are what the sandbox charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedManifest, FeedResult } from '../../activities/feeds/types.ts';
import { openStore } from '../../config/storage.ts';
import type { Store } from '../../connectors/storage/index.ts';
import type { FeedKind } from '../../contract/kinds.ts';
import { removeTempDirs, tempDir } from '../../testkit/drill-input.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';
import type { ScheduledFeedInput } from '../../workflows/scheduled-feed.ts';
import { readFeedRun } from './feed-helpers.ts';
import { canonical, expectedSlices, feedKey } from './feed-oracle.ts';
import { runOnEnvQueues } from './helpers.ts';
import { chargedSince } from './oracle.ts';
import { DAY, FIRST_RUN_AT } from './push-helpers.ts';

const SEARCH_CAP = 100;
let env: JobEnv;
let now = FIRST_RUN_AT;
let output: string;
let store: Store;

beforeAll(async () => {
  env = await startJobEnv({
    sandbox: { seed: 23, clock: () => now, intentSurfacing: { from: FIRST_RUN_AT - DAY, days: 40, share: 0.4 } },
  });
  await env.startWorker();
  const dir = await tempDir('feeds-promise');
  output = `file://${dir}`;
  store = openStore(output);
});
afterAll(async () => {
  await env?.stop();
  await removeTempDirs();
});

function runFeed(input: Omit<ScheduledFeedInput, 'taskQueue' | 'apiTaskQueue' | 'output'>): Promise<FeedResult> {
  const runAt = new Date(now).toISOString();
  return runOnEnvQueues<FeedResult>(env, 'scheduledFeed', `feed-${input.name}-${now}`, { ...input, output, runAt });
}

/** A run's manifest and the lines of its manifested parts, as a consumer of the bucket reads them (shipped schemas). */
const readRun = (kind: FeedKind, result: FeedResult) => readFeedRun(store, kind, result);

const ISO = (ms: number) => new Date(ms).toISOString();

/**
 * Three runs of a search feed; `truth(body)` is the sandbox's uncapped search at the clock. After each run, every
 * company or contact matching since the feed's start has been delivered with its newest matching signal.
 */
async function searchPromise(
  kind: 'company-search' | 'contact-search',
  name: string,
  filters: Record<string, unknown>,
  steps: number[],
  truth: (body: Record<string, unknown>) => { latest_signal_id: string; latest_signal_at: string }[],
  sinceDays = 30,
) {
  const since = ISO(now - sinceDays * DAY);
  const newestDelivered = new Map<string, string>();
  const deliveredPairs = new Set<string>();
  const manifests: FeedManifest[] = [];
  for (const at of steps) {
    now = at;
    const mark = env.sandbox.truth.lastCall();
    const result = await runFeed({ name, kind, filters, since });
    const { manifest, lines } = await readRun(kind, result);
    manifests.push(manifest);
    expect(manifest.incomplete).toEqual([]);
    expect(manifest.status).toBe('completed');
    for (const line of lines) {
      const key = feedKey(kind, line);
      const pair = `${key} ${String(line['latest_signal_id'])}`;
      expect(deliveredPairs.has(pair), `delivered twice: ${pair}`).toBe(false);
      deliveredPairs.add(pair);
      newestDelivered.set(key, String(line['latest_signal_id']));
    }
    const expected = truth({ ...filters, detected_after: since });
    expect(expected.length).toBeGreaterThan(0);
    for (const item of expected) {
      const key = feedKey(kind, item as unknown as Record<string, unknown>);
      expect(newestDelivered.get(key), `${key} at run ${manifests.length}`).toBe(item.latest_signal_id);
    }
    // Every delivered company matches (no stray lines), and the run paid what the sandbox charged.
    expect(newestDelivered.size).toBe(expected.length);
    const calls = env.sandbox.truth.calls({ after: mark }).filter((c) => c.path.endsWith('/search'));
    // Each slice asked once, and exactly the slices the truth calls for: the first request narrowed while its matches
    // fill an answer, in the documented order.
    const asked = calls.map((c) => canonical((c.asked as { body: Record<string, unknown> }).body));
    expect(asked.length - new Set(asked).size, 'requests sent twice in one run').toBe(0);
    const root = (calls[0]!.asked as { body: Record<string, unknown> }).body;
    expect({ ...root, detected_after: undefined, limit: undefined }).toEqual({
      ...filters,
      detected_after: undefined,
      limit: undefined,
    });
    expect([...asked].sort()).toEqual(expectedSlices(kind, root, truth).sort());
    expect(manifest.calls).toBe(calls.length);
    expect(manifest.credits_charged).toBe(chargedSince(env.sandbox, mark));
    expect(manifest.credits_charged).toBe(calls.reduce((sum, c) => sum + c.credits, 0));
  }
  return manifests;
}

describe('company-search feed', () => {
  it('delivers every matching company once per newest signal over three runs, splitting its capped first answer', async () => {
    const filters = { industries: ['Computer Software', 'Internet', 'Telecommunications', 'Construction'] };
    const start = now;
    const manifests = await searchPromise(
      'company-search',
      'software-cos',
      filters,
      [start, start + 3 * DAY, start + 20 * DAY],
      (body) => env.sandbox.truth.companySearch(body),
    );
    // The first run's window holds more than one answer's 100: it was split (by type) until each slice fitted.
    expect(
      env.sandbox.truth.companySearch({ ...filters, detected_after: ISO(start - 30 * DAY) }, start).length,
    ).toBeGreaterThan(SEARCH_CAP);
    expect(manifests[0]!.slices!.split).toBeGreaterThan(0);
    expect(manifests[1]!.counts.new).toBeGreaterThan(0);
    expect(manifests[2]!.counts.new).toBeGreaterThan(0);
  });

  it('halves an employee-count range until each slice fits', async () => {
    now = FIRST_RUN_AT + 60 * DAY;
    const filters = { signal_types: ['news'], employee_count_min: 0, employee_count_max: 1_000_000 };
    const result = await runFeed({ name: 'news-by-size', kind: 'company-search', filters, since: ISO(now - 60 * DAY) });
    const { manifest, lines } = await readRun('company-search', result);
    const truth = env.sandbox.truth.companySearch({ ...filters, detected_after: ISO(now - 60 * DAY) });
    expect(truth.length).toBeGreaterThan(SEARCH_CAP);
    expect(manifest.incomplete).toEqual([]);
    expect(new Set(lines.map((line) => line['domain']))).toEqual(new Set(truth.map((c) => c.domain)));
    expect(manifest.slices!.split).toBeGreaterThan(0);
  });

  it('names a capped slice it cannot split as incomplete, and still delivers the newest 100', async () => {
    now = FIRST_RUN_AT + 70 * DAY;
    const filters = { signal_types: ['news'] };
    const result = await runFeed({ name: 'all-news', kind: 'company-search', filters, since: ISO(now - 60 * DAY) });
    const { manifest, lines } = await readRun('company-search', result);
    const truth = env.sandbox.truth.companySearch({ ...filters, detected_after: ISO(now - 60 * DAY) });
    expect(truth.length).toBeGreaterThan(SEARCH_CAP);
    expect(result.status).toBe('completed_with_errors');
    expect(manifest.status).toBe('completed_with_errors');
    expect(manifest.incomplete).toEqual([{ filters, reason: 'capped', returned: SEARCH_CAP }]);
    expect(lines.map((line) => line['domain'])).toEqual(
      expect.arrayContaining(truth.slice(0, SEARCH_CAP).map((c) => c.domain)),
    );
    expect(lines).toHaveLength(SEARCH_CAP);
  });
});

describe('a feed run under --max-credits', () => {
  it('makes no call that could cross the budget and names every slice it left as incomplete', async () => {
    now = FIRST_RUN_AT + 80 * DAY;
    const filters = { industries: ['Computer Software', 'Internet', 'Telecommunications', 'Construction'] };
    const mark = env.sandbox.truth.lastCall();
    const result = await runFeed({
      name: 'budgeted',
      kind: 'company-search',
      filters,
      since: ISO(now - 30 * DAY),
      maxCredits: 250,
      concurrency: 1,
    });
    const { manifest } = await readRun('company-search', result);
    // The first answer is full (100 credits) and split by type; a slice is asked only while its worst case (100)
    // fits what is left of 250, so the run stops short and names the rest.
    expect(env.sandbox.truth.companySearch({ ...filters, detected_after: ISO(now - 30 * DAY) }).length).toBeGreaterThan(
      SEARCH_CAP,
    );
    // This run's calls are those asking for its industries (a run an earlier test left behind asks for others).
    const ours = env.sandbox.truth.calls({ after: mark }).filter((call) => {
      const asked = (call.asked as { body?: { industries?: string[] } } | undefined)?.body?.industries;
      return asked?.every((industry) => filters.industries.includes(industry));
    });
    const charged = ours.reduce((sum, call) => sum + call.credits, 0);
    expect(charged).toBeLessThanOrEqual(250);
    expect(ours.length).toBeGreaterThanOrEqual(2);
    expect(manifest.credits_charged).toBe(charged);
    expect(result.status).toBe('completed_with_errors');
    const left = manifest.incomplete.filter((slice) => slice.reason === 'budget');
    expect(left.length).toBeGreaterThan(0);
    for (const slice of left) expect(slice.via).toMatch(/^signal_types=/);
  });
});

describe('contact-search feed', () => {
  it('delivers every matching contact once per newest signal over three runs', async () => {
    now = FIRST_RUN_AT;
    const filters = { seniority: ['Vp', 'Director', 'Manager'] };
    await searchPromise(
      'contact-search',
      'leaders',
      filters,
      [now, now + 4 * DAY, now + 15 * DAY],
      (body) => env.sandbox.truth.contactSearch(body),
      10,
    );
  });
});

describe('intent-contacts feed', () => {
  it('pages to the end, delivers each new contact of each topic once, and pays 1 credit per contact returned', async () => {
    const filters = { topic_ids: ['b2b_17', 'b2b_4242', 'b2b_30001'] };
    const delivered = new Set<string>();
    const start = FIRST_RUN_AT;
    const pageSize = 40;
    for (const at of [start, start + 10 * DAY, start + 45 * DAY]) {
      now = at;
      const mark = env.sandbox.truth.lastCall();
      const result = await runFeed({ name: 'intent', kind: 'intent-contacts', filters, pageSize });
      const { manifest, lines } = await readRun('intent-contacts', result);
      const truth = env.sandbox.truth.intentContacts({ ...filters });
      for (const line of lines) {
        const key = feedKey('intent-contacts', line);
        expect(delivered.has(key), `delivered twice: ${key}`).toBe(false);
        delivered.add(key);
      }
      const expected = new Set(
        truth.map((item) => feedKey('intent-contacts', item as unknown as Record<string, unknown>)),
      );
      expect(delivered).toEqual(expected);
      // Every page was read (the cursor followed to its end), each paid 1 credit per contact it returned.
      const calls = env.sandbox.truth.calls({ after: mark, path: '/v1/buyer-intent/contacts' });
      expect(calls).toHaveLength(Math.ceil(truth.length / pageSize));
      expect(manifest.credits_charged).toBe(truth.length);
      expect(chargedSince(env.sandbox, mark)).toBe(truth.length);
      expect(manifest.counts.new).toBe(lines.length);
      expect(manifest.incomplete).toEqual([]);
    }
    expect(delivered.size).toBeGreaterThan(0);
  });
});
