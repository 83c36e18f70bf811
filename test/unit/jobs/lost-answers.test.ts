/**
 * How finalize counts lost answers (activities/run/unsaved-answers.ts): a marker whose call may still be answered is
 * waited for until it settles, but never past its request timeout (a worker that died never settles it), never past
 * a fixed cap, and not once finalize is cancelled; markers written before markers said they await an answer are
 * counted as they always were; an answered call's marker says what it cost, so two attempts whose parts are written
 * at once leave no call of unknown cost. The race the wait exists for (a timed-out attempt answered while the job
 * finalizes) is in paid-race.test.ts and the drills. The tests wait on finalize's own rounds of waiting (each round
 * heartbeats), never on time: a loaded machine only makes them slower.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partKey } from '../../../activities/jobs/layout.ts';
import { jobPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { publishPaidPart, sendPaidCall } from '../../../activities/paid/paid-call.ts';
import type { StoredPart } from '../../../activities/run/parts.ts';
import {
  ANSWER_GRACE_MS,
  type AnswerWait,
  CallMarker,
  type CallMarkerRecord,
  callsPrefix,
  countUnsavedAnswers,
  MAX_ANSWER_WAIT_MS,
  type UnsavedAnswers,
} from '../../../activities/run/unsaved-answers.ts';
import { openStore } from '../../../config/storage.ts';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import type { Store } from '../../../connectors/storage/index.ts';
import { refusingStore } from '../../helpers/refusing-store.ts';
import { sendJson, startTestServer } from '../client/server.ts';

let dir: string;
let store: Store;
let jobs = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lost-answers-'));
  store = openStore(pathToFileURL(dir).href);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function newJob(): JobRef {
  jobs += 1;
  return { jobId: `job-${jobs}`, kind: 'enrich', output: pathToFileURL(dir).href };
}

/** A marker as some worker left it, written as is. */
async function writeMarker(job: JobRef, call: string, record: Partial<CallMarkerRecord>): Promise<void> {
  const full: CallMarkerRecord = {
    batch: 0,
    call,
    attempt: 1,
    started_at: new Date().toISOString(),
    credits: null,
    reason: 'no answer saved (the worker stopped during the call)',
    ...record,
  };
  await store.writeText(`${callsPrefix(job)}part-00000-${call}.json`, JSON.stringify(full));
}

/** Counts as finalize does, and how many rounds it waited for answers still on their way (`then` runs at each). */
async function counted(
  job: JobRef,
  saved: ReadonlyMap<number, ReadonlySet<string>> = new Map(),
  wait: Omit<AnswerWait, 'onWait'> = {},
  then: (round: number) => void = () => {},
): Promise<{ value: UnsavedAnswers; rounds: number }> {
  let rounds = 0;
  const value = await countUnsavedAnswers(store, job, saved, { pollMs: 20, ...wait, onWait: () => then(++rounds) });
  return { value, rounds };
}

describe('counting lost answers at finalize', () => {
  it('a call still awaiting its answer is waited for: its credits count once the attempt writes them', async () => {
    const job = newJob();
    const marker = await CallMarker.begin(store, job, 0, 1, 30_000);
    // The answer comes while finalize waits: after its second round of waiting.
    const { value, rounds } = await counted(job, new Map(), {}, (round) => {
      if (round === 2) void marker.lost(12, 'answered after this attempt was cancelled');
    });
    expect(value).toEqual({ credits: 12, unknownCalls: 0 });
    expect(rounds).toBeGreaterThanOrEqual(2);
  });

  it('a call whose marker the full output refused to rewrite still counts its credits in this process', async () => {
    const job = newJob();
    let full = false;
    const filling = refusingStore(store, { refused: (key) => key.includes('/work/calls/'), while: () => full });
    const marker = await CallMarker.begin(filling, job, 0, 1, 30_000);
    // The disk fills up while the call is on its way: its answer's credits cannot be written into its marker.
    full = true;
    await marker.lost(172, 'answered, but the part could not be written: write refused (ENOSPC)');
    full = false;
    // Finalize, past the call's timeout: the marker on disk still says it awaits its answer.
    const late = Date.now() + MAX_ANSWER_WAIT_MS;
    expect(await countUnsavedAnswers(store, job, new Map(), { now: () => late })).toEqual({
      credits: 172,
      unknownCalls: 0,
    });
  });

  it('an awaited call whose attempt finds it charged nothing (its marker removed) counts nothing', async () => {
    const job = newJob();
    const marker = await CallMarker.begin(store, job, 0, 1, 30_000);
    const { value } = await counted(job, new Map(), {}, (round) => {
      if (round === 1) void marker.failed(new Error('never sent'), false);
    });
    expect(value).toEqual({ credits: 0, unknownCalls: 0 });
  });

  it('a call whose worker died is unknown once its request timeout has passed, not before', async () => {
    const job = newJob();
    await CallMarker.begin(store, job, 0, 1, 60_000);
    // A clock of the test's own: past the grace, short of the request timeout, until the test moves it.
    let clock = Date.now() + ANSWER_GRACE_MS;
    let polls = 0;
    let polled: () => void = () => {};
    const enoughPolls = new Promise<void>((resolve) => {
      polled = () => {
        if (++polls === 5) resolve();
      };
    });
    const watched = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'readText' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          polled();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    let settled = false;
    const counting = countUnsavedAnswers(watched, job, new Map(), { pollMs: 5, now: () => clock }).finally(() => {
      settled = true;
    });
    await enoughPolls;
    expect(settled).toBe(false); // five rounds, and still waiting for the answer
    clock += 60_000 + 1;
    expect(await counting).toEqual({ credits: 0, unknownCalls: 1 });
  });

  it('a marker older than its request timeout, or one written before markers awaited answers, is not waited for', async () => {
    const job = newJob();
    const old = new Date(Date.now() - 60_000 - ANSWER_GRACE_MS - 1_000).toISOString();
    await writeMarker(job, 'a1-0000000001', { awaiting_answer: true, timeout_ms: 60_000, started_at: old });
    await writeMarker(job, 'a1-0000000002', {}); // an earlier version's marker: no awaiting_answer, no timeout
    await writeMarker(job, 'a1-0000000003', { credits: 7, reason: 'a 502 after the work' });
    const { value, rounds } = await counted(job);
    expect(value).toEqual({ credits: 7, unknownCalls: 2 });
    expect(rounds).toBe(0);
  });

  it('markers of saved answers are removed and not counted, awaited or not', async () => {
    const job = newJob();
    const saved = await CallMarker.begin(store, job, 0, 1, 30_000);
    const { value, rounds } = await counted(job, new Map([[0, new Set([saved.id])]]));
    expect(value).toEqual({ credits: 0, unknownCalls: 0 });
    expect(rounds).toBe(0);
    const left: string[] = [];
    for await (const info of store.list(callsPrefix(job))) left.push(info.key);
    expect(left).toEqual([]);
  });

  it('never waits past the cap, however long the client was allowed to wait', async () => {
    const job = newJob();
    await CallMarker.begin(store, job, 0, 1, 10 * MAX_ANSWER_WAIT_MS);
    let clock = Date.now();
    // Finalize's clock passes the cap while it waits: the next round is its last.
    const { value, rounds } = await counted(job, new Map(), { now: () => clock }, (round) => {
      if (round === 2) clock += MAX_ANSWER_WAIT_MS + 1;
    });
    expect(value).toEqual({ credits: 0, unknownCalls: 1 });
    expect(rounds).toBe(2);
  });

  it('two attempts whose parts are written in the same instant: the one the part does not name counts its credits', async () => {
    const job = newJob();
    const key = partKey(job, 0);
    const identity = jobPartIdentity(job, 0);
    const order: string[] = [];
    // Both attempts check the part (absent, as each saw it before its call) before either has written it: each
    // write waits until both attempts have come to it.
    let arrived = 0;
    let bothArrived: () => void = () => {};
    const both = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    const attempt = async (n: number, credits: number) => {
      const { marker } = await sendPaidCall(store, job, 0, { attempt: n }, async (call) => {
        await call.beforeSend?.();
        return { credits };
      });
      return publishPaidPart(store, key, {}, identity, [{ marker, credits }], async (calls) => {
        if (++arrived === 2) bothArrived();
        await both;
        order.push(calls.join());
        return { calls } as unknown as StoredPart;
      });
    };
    const published = await Promise.all([attempt(1, 8), attempt(2, 5)]);
    expect(published.map((p) => p.lost)).toEqual([false, false]);
    // The part holds the last write's answer; the other was paid for and is lost, with what it cost.
    const last = order.at(-1)!;
    const { value, rounds } = await counted(job, new Map([[0, new Set([last])]]));
    expect(value).toEqual({ credits: last.startsWith('a1-') ? 5 : 8, unknownCalls: 0 });
    expect(rounds).toBe(0);
  });

  it('a cancelled finalize stops waiting: what has not settled is unknown', async () => {
    const job = newJob();
    await CallMarker.begin(store, job, 0, 1, 30_000);
    const cancel = new AbortController();
    // Cancelled during its first round's wait (a minute long: the cancel ends it); it heartbeat once more and stops.
    const { value, rounds } = await counted(job, new Map(), { pollMs: 60_000, signal: cancel.signal }, (round) => {
      if (round === 1) setImmediate(() => cancel.abort(new Error('cancelled')));
    });
    expect(value).toEqual({ credits: 0, unknownCalls: 1 });
    expect(rounds).toBe(2);
  });
});

describe('a paid call waiting for its slot of the rate limit', () => {
  it('leaves no marker until it has its slot, so a worker that dies while waiting reports no unknown call', async () => {
    const job = newJob();
    const server = await startTestServer((_req, res) => sendJson(res, 200, { verifications: [], errors: [] }));
    let grant: () => void = () => undefined;
    const slot = new Promise<void>((resolve) => {
      grant = resolve;
    });
    let askedForSlot: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      askedForSlot = resolve;
    });
    const client = new SignalClient({
      baseUrl: server.url,
      apiKey: 'sk_test_slot',
      retry: false,
      beforeRequest: async () => {
        askedForSlot();
        await slot;
        return undefined;
      },
    });
    const markers = async () => {
      const keys: string[] = [];
      for await (const o of store.list(callsPrefix(job))) keys.push(o.key);
      return keys;
    };
    try {
      const call = sendPaidCall(store, job, 0, { attempt: 1 }, (options) =>
        client.verifyEmails({ emails: ['a@b.co'] }, options),
      );
      await asked;
      // Still waiting for its slot: the service has seen nothing, and nothing says it might have.
      expect(server.requests).toHaveLength(0);
      expect(await markers()).toEqual([]);
      grant();
      const { marker } = await call;
      expect(server.requests).toHaveLength(1);
      expect(await markers()).toEqual([marker.key]);
    } finally {
      await server.close();
    }
  });

  it('a call its marker held past its slot waits for another slot, and leaves one marker (issue 36, rate-limit 429)', async () => {
    const job = newJob();
    const events: string[] = [];
    const server = await startTestServer((_req, res) => {
      events.push('sent');
      sendJson(res, 200, { verifications: [], errors: [] });
    });
    const markerStore = new Proxy(store, {
      get(target, key) {
        if (key === 'writeText') {
          return (...args: Parameters<Store['writeText']>) => {
            events.push('marker written');
            return target.writeText(...args);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let slots = 0;
    const client = new SignalClient({
      baseUrl: server.url,
      apiKey: 'sk_test_slot',
      retry: false,
      beforeRequest: async () => {
        slots += 1;
        events.push(`slot ${slots}`);
        // The first slot has passed by the time the marker is written (a loaded disk); the second has not.
        const onTime = slots > 1;
        return () => onTime;
      },
    });
    try {
      const { marker } = await sendPaidCall(markerStore, job, 0, { attempt: 1 }, (options) =>
        client.verifyEmails({ emails: ['a@b.co'] }, options),
      );
      expect(events).toEqual(['slot 1', 'marker written', 'slot 2', 'sent', 'marker written']);
      const keys: string[] = [];
      for await (const o of store.list(callsPrefix(job))) keys.push(o.key);
      expect(keys).toEqual([marker.key]);
    } finally {
      await server.close();
    }
  });
});
