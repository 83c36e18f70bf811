/**
 * Two attempts of one feed call at once (Temporal starts a second when the first one's heartbeat lapses: a paused
 * worker, a restarted Temporal server), an attempt cancelled before its call, and an answer the output refused: every
 * call the service charged is in the run's saved answers or counted in its manifest's `unsaved_answers`, as for a job
 * or a push. What the service charged is what its answers said, counted by the fake service here (1 credit per
 * contact returned, spec section 8).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchFeedPage } from '../../../activities/feeds/fetch.ts';
import { finalizeFeedRun } from '../../../activities/feeds/finalize.ts';
import { feedManifestKey } from '../../../activities/feeds/layout.ts';
import type { FeedManifest, FeedPageRequest, FeedRunRef } from '../../../activities/feeds/types.ts';
import { PartSpool } from '../../../activities/paid/spool.ts';
import { type AnswerWait, MAX_ANSWER_WAIT_MS } from '../../../activities/run/unsaved-answers.ts';
import { openStore } from '../../../config/storage.ts';
import type { SignalClient } from '../../../connectors/signal-api/client.ts';
import type { BuyerIntentContactsParams, CallOptions } from '../../../connectors/signal-api/types.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import { heldCalls } from '../../helpers/held-calls.ts';
import { refusingStore } from '../../helpers/refusing-store.ts';

const root = mkdtempSync(join(tmpdir(), 'signal-kit-feed-race-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

function newRun(): { store: Store; run: FeedRunRef } {
  const store = openStore(join(root, `out-${runs++}`));
  const run: FeedRunRef = {
    name: 'f',
    kind: 'intent-contacts',
    output: store.url,
    runId: '20260306T000000Z',
    date: '2026-03-06',
  };
  return { store, run };
}

const filters = { topic_ids: ['b2b_17'] };
const page = (run: FeedRunRef): FeedPageRequest => ({ run, index: 0, filters, cursor: null, pageSize: 3 });

/** An intent service whose pages wait until the test releases them (in arrival order); `charged` is what they cost. */
function heldService() {
  const held = heldCalls();
  const client = {
    async buyerIntentContacts(params: BuyerIntentContactsParams, call?: CallOptions) {
      await held.hold(call);
      const contacts = Array.from({ length: params.page_size ?? 3 }, (_, i) => ({
        topic_id: 'b2b_17',
        contact: { email: `p${i}@a.com` },
        company: { domain: 'a.com' },
      }));
      held.state.charged += contacts.length;
      return { contacts, next_cursor: null, credits: contacts.length };
    },
  } as unknown as SignalClient;
  return { client, ...held };
}

async function finalized(
  store: Store,
  run: FeedRunRef,
  status: 'completed' | 'failed' = 'completed',
  wait: AnswerWait = {},
) {
  await finalizeFeedRun(
    store,
    {
      run,
      status,
      startedAt: '2026-03-06T00:00:00.000Z',
      scheduledAt: '2026-03-06T00:00:00.000Z',
      calls: 1,
      incomplete: [],
      filters,
    },
    wait,
  );
  return JSON.parse(await store.readText(feedManifestKey(run))) as FeedManifest;
}

describe('a feed page fetched by two attempts at once', () => {
  it('saves the first answer to arrive and counts the other with the credits the service said', async () => {
    const { store, run } = newRun();
    const service = heldService();
    // Attempt 1's heartbeat lapsed while its answer was on its way: Temporal started attempt 2.
    const first = fetchFeedPage(service.client, store, page(run), { attempt: 1 });
    await service.held(1);
    const second = fetchFeedPage(service.client, store, page(run), { attempt: 2 });
    await service.held(2);
    service.waiting[1]!();
    expect(await second).toMatchObject({ calls: 1, count: 3, credits: 3 });
    service.waiting[0]!();
    // The late answer does not replace the saved one: the call is answered by what attempt 2 saved.
    expect(await first).toMatchObject({ calls: 0, count: 3, credits: 3 });

    const manifest = await finalized(store, run);
    expect(service.state.charged).toBe(6);
    expect(manifest.credits_charged).toBe(service.state.charged);
    expect(manifest.unsaved_answers).toEqual({ credits: 3, unknown_calls: 0 });
    expect(manifest.counts).toMatchObject({ returned: 3, new: 3 });
  });

  it('counts a call whose answer never came as unknown once another attempt saved the page', async () => {
    const { store, run } = newRun();
    const service = heldService();
    // Attempt 1 sent its call and its worker stopped (SIGKILL): its answer is never read.
    void fetchFeedPage(service.client, store, page(run), { attempt: 1 });
    await service.held(1);
    const second = fetchFeedPage(service.client, store, page(run), { attempt: 2 });
    await service.held(2);
    service.waiting[1]!();
    await second;
    // Finalized once the dead call can no longer be answered (its timeout is behind the clock).
    const manifest = await finalized(store, run, 'completed', { now: () => Date.now() + MAX_ANSWER_WAIT_MS + 600_000 });
    expect(manifest.credits_charged).toBe(3);
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 1 });
  });

  it('sends nothing and leaves no marker for an attempt cancelled before its call', async () => {
    const { store, run } = newRun();
    const service = heldService();
    const cancel = new AbortController();
    cancel.abort(new Error('heartbeat timed out'));
    await expect(
      fetchFeedPage(service.client, store, page(run), { attempt: 1, signal: cancel.signal }),
    ).rejects.toThrow('heartbeat timed out');
    expect(service.state.calls).toBe(0);
    expect((await finalized(store, run)).unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
  });
});

describe('a feed answer the output refused', () => {
  it('stops the call, is counted by the stopped run, and a try of the run publishes it without paying again', async () => {
    const { store, run } = newRun();
    const spool = new PartSpool(join(root, `spool-${runs}`));
    const service = heldService();
    const refusing = refusingStore(store, { refused: (key) => key.includes('/answer-') });
    const fetching = fetchFeedPage(service.client, refusing, page(run), { attempt: 1, spool });
    await service.held(1);
    service.waiting[0]!();
    await expect(fetching).rejects.toThrow(/refused \(ENOSPC\)/);
    const stopped = await finalized(store, run, 'failed');
    expect(stopped.credits_charged).toBe(3);
    expect(stopped.unsaved_answers).toEqual({ credits: 3, unknown_calls: 0 });

    // While the output still refuses, the kept answer cannot be published: no call is made either.
    await expect(fetchFeedPage(service.client, refusing, page(run), { attempt: 1, spool })).rejects.toThrow(/ENOSPC/);
    // The storage fixed: the try publishes the kept answer and pays nothing.
    expect(await fetchFeedPage(service.client, store, page(run), { attempt: 1, spool })).toMatchObject({
      calls: 0,
      count: 3,
    });
    expect(service.state.calls).toBe(1);
    const manifest = await finalized(store, run);
    expect(manifest).toMatchObject({ status: 'completed', credits_charged: 3, counts: { new: 3 } });
    expect(manifest.unsaved_answers).toEqual({ credits: 0, unknown_calls: 0 });
  });
});
