/**
 * Two attempts of the same batch at once (Temporal starts a second when the first one's heartbeat lapses: a paused
 * worker, an event loop held by a huge answer, a restarted Temporal server): every call the service charged is
 * either in the part or counted in the manifest's `unsaved_answers`, never silently paid twice. And the attempt's
 * cancellation stops a call not yet sent, while a call sent is read to its answer, so its cost is known. The service
 * here is a small server whose answers the test releases one by one; what it charged is what its answers said
 * (`x-credits-charged`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enrichBatch } from '../../../activities/jobs/enrich.ts';
import type { finalizeJob } from '../../../activities/jobs/finalize.ts';
import { batchKey } from '../../../activities/jobs/layout.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { verifyBatch } from '../../../activities/jobs/verify.ts';
import { openStore } from '../../../config/storage.ts';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import { changes } from '../../helpers/changes.ts';
import { finalizeCompleted } from '../../helpers/finalize.ts';
import { type RecordedRequest, sendJson, signalBody, startTestServer, type TestServer } from '../client/server.ts';

let server: TestServer;
let dir: string;
/** Answers waiting for the test to release them, in the order the calls arrived. */
const waiting: (() => void)[] = [];
/** Credits each answer said it charged: the service's own account of what it billed. */
let charged = 0;

/** Two signals per domain (4 credits), or a verification per address (1 credit). */
function answer(req: RecordedRequest, res: ServerResponse) {
  if (req.url.startsWith('/v1/emails/verify/bulk')) {
    const { emails } = req.json as { emails: string[] };
    const verifications = emails.map((email) => ({ email, result: 'deliverable', score: 90 }));
    return hold(() => sendJson(res, 200, { verifications, errors: [] }, { 'x-credits-charged': emails.length }));
  }
  const { domains } = req.json as { domains: string[] };
  const results = domains.map((domain) => ({
    domain,
    status: 'ok',
    company: { name: domain, domain },
    signals: [signalBody(`sig_${domain}_1`), signalBody(`sig_${domain}_2`)],
  }));
  return hold(() => sendJson(res, 200, { results }, { 'x-credits-charged': domains.length * 4 }));
}

function hold(send: () => void) {
  waiting.push(send);
  watched.changed();
}

/** Releases the answer of call `n` (0-based, in arrival order) and counts what it charged. */
function release(n: number, credits: number) {
  charged += credits;
  waiting[n]!();
}

beforeAll(async () => {
  server = await startTestServer((req, res) => answer(req, res));
  dir = await mkdtemp(join(tmpdir(), 'paid-race-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  waiting.length = 0;
  server.requests.length = 0;
  charged = 0;
});

/** Calls arriving and finalize reading markers wake the test's waits (`until`), never a clock. */
const watched = changes();
const until = watched.until;

async function setUp(jobId: string, kind: JobRef['kind'], values: string[]) {
  const output = pathToFileURL(dir).href;
  const store = openStore(output);
  const job: JobRef = { jobId, kind, output };
  const batch = values.map((v, i) => JSON.stringify({ v, row: i + 1, raw: v })).join('\n');
  await store.writeText(batchKey(job, 0), `${batch}\n`);
  const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_race', retry: false });
  const finalize = () => finalizeCompleted(store, job, values.length);
  return { store, job, client, finalize };
}

/**
 * After both attempts' calls were answered and charged (`perCall` credits each): the manifest counts both, and says
 * what the lost answer cost.
 */
async function expectBothCalls(finalize: () => ReturnType<typeof finalizeJob>, perCall: number) {
  const result = await finalize();
  expect(charged).toBe(2 * perCall);
  expect(result.credits).toBe(charged);
  expect(result.unsavedAnswers).toEqual({ credits: perCall, unknown_calls: 0 });
}

/**
 * Attempt 1 sends its call (answer 0) and is cancelled, as Temporal does when its heartbeat lapsed; attempt 2 pays for
 * the batch and saves it (answer 1, 4 credits). Returns attempt 1, still waiting for its answer.
 */
async function cancelledWhileRedone(jobId: string, domain: string) {
  const setup = await setUp(jobId, 'enrich', [domain]);
  const { store, job, client } = setup;
  const cancel = new AbortController();
  const first = enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 1, signal: cancel.signal });
  await until(() => waiting.length === 1);
  cancel.abort(new Error('heartbeat timed out'));
  const second = enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 2 });
  await until(() => waiting.length === 2);
  release(1, 4);
  await second;
  return { ...setup, first };
}

describe('two attempts of one batch at once: paid once, or the second payment is counted', () => {
  it('enrich: the attempt that answers last finds the part saved and keeps its marker with its credits', async () => {
    const { store, job, client, finalize } = await setUp('race-enrich', 'enrich', ['a.com', 'b.com']);
    // Attempt 1 sends its call; its answer is slow. Attempt 2 (after a lapsed heartbeat) sends the same call.
    const first = enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 1 });
    await until(() => waiting.length === 1);
    const second = enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 2 });
    await until(() => waiting.length === 2);
    // The second is answered and saved first; then the first's answer arrives.
    release(1, 8);
    const saved = await second;
    release(0, 8);
    const late = await first;
    expect(saved.reused).toBe(false);
    expect(late.counts.credits).toBe(8);

    await expectBothCalls(finalize, 8);
    await client.close();
  });

  it('verify: the same race on an email chunk', async () => {
    const { store, job, client, finalize } = await setUp('race-verify', 'verify-emails', ['a@x.com', 'b@x.com']);
    const first = verifyBatch(client, store, { job, index: 0 }, { attempt: 1 });
    await until(() => waiting.length === 1);
    const second = verifyBatch(client, store, { job, index: 0 }, { attempt: 2 });
    await until(() => waiting.length === 2);
    release(1, 2);
    await second;
    release(0, 2);
    await first;
    await expectBothCalls(finalize, 2);
    await client.close();
  });

  it('a cancelled attempt whose call was sent reads its answer and counts its credits, then ends cancelled', async () => {
    const { client, finalize, first } = await cancelledWhileRedone('race-cancel', 'c.com');
    // The cancelled attempt's answer still comes: charged, and not saved by the attempt Temporal gave up on.
    release(0, 4);
    await expect(first).rejects.toThrow('heartbeat timed out');
    const result = await finalize();
    expect(result.unsavedAnswers).toEqual({ credits: 4, unknown_calls: 0 });
    expect(charged).toBe(result.credits);
    await client.close();
  });

  it('finalize waits for the answer of a cancelled attempt still on its way, and counts what it cost', async () => {
    const { client, finalize, first, store } = await cancelledWhileRedone('race-finalize', 'f.com');
    // Every batch is saved: the job finalizes while the first attempt's charged answer is still on its way.
    let markerReads = 0;
    const readText = store.readText.bind(store);
    store.readText = (key: string) => {
      if (key.includes('/work/calls/')) {
        markerReads += 1;
        watched.changed();
      }
      return readText(key);
    };
    let finalized = false;
    const finalizing = finalize().finally(() => {
      finalized = true;
    });
    // Finalize has looked at the awaited marker again and again (not a time: its own rounds), and still waits.
    await until(() => markerReads >= 3);
    expect(finalized).toBe(false);
    release(0, 4);
    await expect(first).rejects.toThrow('heartbeat timed out');
    const result = await finalizing;
    expect(result.unsavedAnswers).toEqual({ credits: 4, unknown_calls: 0 });
    expect(result.credits).toBe(charged);
    await client.close();
  });

  it('a cancelled attempt whose answer never comes gives up at the request timeout: one call of unknown cost', async () => {
    const { store, job, finalize } = await setUp('race-cancel-lost', 'enrich', ['e.com']);
    const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_race', retry: false, timeoutMs: 300 });
    const cancel = new AbortController();
    const first = enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 1, signal: cancel.signal });
    await until(() => waiting.length === 1);
    cancel.abort(new Error('heartbeat timed out'));
    // Not aborted by the cancellation: it ends when the client's own timeout does.
    await expect(first).rejects.toThrow('no complete answer within 300 ms');
    const result = await finalize();
    expect(result.unsavedAnswers).toEqual({ credits: 0, unknown_calls: 1 });
    await client.close();
  });

  it('an attempt cancelled before its call was sent leaves nothing to count', async () => {
    const { store, job, client, finalize } = await setUp('race-unsent', 'enrich', ['d.com']);
    const cancel = new AbortController();
    cancel.abort(new Error('cancelled while waiting'));
    await expect(
      enrichBatch(client, store, { job, index: 0, options: {} }, { attempt: 1, signal: cancel.signal }),
    ).rejects.toThrow('cancelled while waiting');
    expect(server.requests).toHaveLength(0);
    const result = await finalize();
    expect(result.unsavedAnswers).toEqual({ credits: 0, unknown_calls: 0 });
    await client.close();
  });
});
