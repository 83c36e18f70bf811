/**
 * A CRM sync's batch answer is its receipt: a retried batch that finds it saved, or a re-run that finds it in the
 * worker's spool after the output refused it (a full disk), answers from it without calling the service again; an
 * attempt started while an earlier one's call is on its way takes that call's answer. The calls are the sandbox's own
 * record, never the kit's counts.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartSpool } from '../../../activities/paid/spool.ts';
import { callsPrefix } from '../../../activities/run/scheduled-layout.ts';
import { batchMarkersPrefix } from '../../../activities/run/unsaved-answers.ts';
import { fetchSyncBatch } from '../../../activities/sync/fetch.ts';
import { syncBatchKey } from '../../../activities/sync/layout.ts';
import type { SyncBatch, SyncRunRef } from '../../../activities/sync/types.ts';
import { openStore } from '../../../config/storage.ts';
import { StorageRefusedError } from '../../../connectors/errors.ts';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import type { Store } from '../../../connectors/storage/store.ts';
import { DEFAULT_KEYS, type Sandbox, startSandbox } from '../../../sandbox/index.ts';
import { refusingStore } from '../../helpers/refusing-store.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tempDir = useTempDir('sync-answer-reuse');
let sandbox: Sandbox;
let client: SignalClient;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimitPerMinute: 0, seed: 61 });
  client = new SignalClient({ baseUrl: sandbox.url, apiKey: DEFAULT_KEYS[0]!, retry: false });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
});

/** A run of sync `name` with one batch of companies that have several signals each, its batch file written. */
async function oneBatchRun(name: string) {
  const output = pathToFileURL(join(tempDir(), name)).href;
  const store = openStore(output);
  const run: SyncRunRef = { name, output, runId: '20260301T000000Z', date: '2026-03-01', at: '2026-03-01T00:00:00Z' };
  const domains = ['acme-sync.com', 'globex-sync.com', 'initech-sync.com'];
  const batch: SyncBatch = {
    index: 0,
    detected_after: null,
    domains: domains.map((domain) => ({ domain, start: null })),
  };
  await store.writeText(syncBatchKey(run, 0), JSON.stringify(batch));
  return { store, request: { run, index: 0, filters: { limit: 5 } } };
}

/** Resolves once a call of batch 0 of `run` left its marker and reached the sandbox (it is on its way back). */
async function callOnItsWay(store: Store, run: SyncRunRef, mark: number): Promise<void> {
  const prefix = batchMarkersPrefix({ callsPrefix: callsPrefix(run) }, 0);
  for (let round = 0; round < 2_000; round++) {
    let marked = false;
    for await (const _ of store.list(prefix)) marked = true;
    if (marked && sandbox.truth.lastCall() > mark) return;
    await sleep(5);
  }
  throw new Error('no call of batch 0 reached the sandbox');
}

const enrichCalls = (mark: number) => sandbox.truth.calls({ after: mark, path: '/v1/companies/enrich/bulk' });

describe("a sync batch's saved answer", () => {
  it('is reused by a retry of the batch: one call in all', async () => {
    const { store, request } = await oneBatchRun('sync-retry');
    const mark = sandbox.truth.lastCall();
    const first = await fetchSyncBatch(client, store, request, { attempt: 1 });
    expect(first.counts.lines).toBeGreaterThan(1); // several signals: the answer file is still one line
    const again = await fetchSyncBatch(client, store, request, { attempt: 2 });
    expect(again.reused).toBe(true);
    expect(again.counts).toEqual(first.counts);
    expect(enrichCalls(mark)).toHaveLength(1);
  });

  // The bench's night 2 at 10,000 accounts paid one call twice: a worker's loop held for seconds (the state's check
  // compiled a validator per company), a fetch's heartbeat lapsed, and Temporal's next attempt bought the answer the
  // first attempt's call was still bringing.
  it("an attempt started while an earlier attempt's call is on its way waits for it and takes its answer", async () => {
    const { store, request } = await oneBatchRun('sync-overlap');
    const mark = sandbox.truth.lastCall();
    sandbox.setFaults({ latencyMs: 1_500 });
    try {
      const first = fetchSyncBatch(client, store, request, { attempt: 1 });
      await callOnItsWay(store, request.run, mark);
      const second = await fetchSyncBatch(client, store, request, { attempt: 2 });
      expect(second.reused).toBe(true);
      expect(second.counts).toEqual((await first).counts);
    } finally {
      sandbox.setFaults({});
    }
    expect(enrichCalls(mark)).toHaveLength(1);
  });

  it('an attempt cancelled while its call is on its way saves the answer for the attempt that replaced it', async () => {
    const { store, request } = await oneBatchRun('sync-overlap-cancelled');
    const mark = sandbox.truth.lastCall();
    const cancel = new AbortController();
    sandbox.setFaults({ latencyMs: 1_500 });
    try {
      const first = fetchSyncBatch(client, store, request, { attempt: 1, signal: cancel.signal }).catch(
        (e: unknown) => e,
      );
      await callOnItsWay(store, request.run, mark);
      cancel.abort(new Error('heartbeat timeout'));
      const second = await fetchSyncBatch(client, store, request, { attempt: 2 });
      expect(await first).toHaveProperty('message', 'heartbeat timeout');
      expect(second.reused).toBe(true);
      expect(second.counts.credits).toBe(enrichCalls(mark)[0]?.credits);
    } finally {
      sandbox.setFaults({});
    }
    expect(enrichCalls(mark)).toHaveLength(1);
  });

  it('refused by a full output, is published from the spool by the re-run: one call in all', async () => {
    const { store, request } = await oneBatchRun('sync-full');
    const spool = new PartSpool(join(tempDir(), 'spool'));
    const mark = sandbox.truth.lastCall();
    const refused = await fetchSyncBatch(
      client,
      refusingStore(store, { refused: (key) => key.includes('answer-') }),
      request,
      {
        attempt: 1,
        spool,
      },
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StorageRefusedError);
    const again = await fetchSyncBatch(client, store, request, { attempt: 1, spool });
    expect(again.reused).toBe(true);
    expect(enrichCalls(mark)).toHaveLength(1);
  });
});
