/**
 * Two attempts of one batch of single calls at once (Temporal started the second when the first's heartbeat lapsed):
 * the first saves the batch's part with its paid answers while the second is still going. When the second then
 * stops on a failure, what it publishes for the rows it answered must not replace the part the first saved, even if
 * those rows cost nothing (a company the service does not know): the first's paid answers stay in the output.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichSingleBatch } from '../../../activities/jobs/enrich-single.ts';
import { singleBatchKey, singlePartKey } from '../../../activities/jobs/layout.ts';
import { linesPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { encodePart, readPart, writeEncodedPart, zeroCounts } from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import { sendJson, startTestServer, type TestServer } from '../client/server.ts';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  // Every company this test asks about is unknown to the service: a free 404.
  server = await startTestServer((_req, res) => {
    sendJson(res, 404, { error: { code: 'not_found', message: 'no such company' } });
  });
  dir = await mkdtemp(join(tmpdir(), 'single-race-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a batch of single calls that another attempt saved meanwhile', () => {
  it('keeps the part the other attempt saved when this one stops with only free answers', async () => {
    const output = pathToFileURL(join(dir, 'out')).href;
    const store = openStore(output);
    const job: JobRef = { jobId: 'single-race', kind: 'enrich', output };
    const names = ['Race Alpha', 'Race Beta', 'Race Gamma'];
    await store.writeText(
      singleBatchKey(job, 0),
      names
        .map((name, i) => JSON.stringify({ v: name.toLowerCase(), row: i + 1, raw: name, s: name, m: 'company_name' }))
        .join('\n'),
    );
    const key = singlePartKey(job, 0);
    // What the first attempt saved: every row answered, two of them paid (4 credits), naming its two calls.
    const theirs = names.map((name, i) => ({ row: i + 1, status: i === 0 ? 'not_found' : 'ok', input: name }));
    const theirCounts = { ...zeroCounts(), lines: 3, ok: 2, not_found: 1, credits: 4, calls: 3 };
    let sent = 0;
    const client = new SignalClient({
      baseUrl: server.url,
      apiKey: 'sk_test_full',
      retry: false,
      beforeRequest: async () => {
        sent += 1;
        // While this attempt's first call is on its way, the first attempt saves the batch.
        if (sent === 1) {
          await writeEncodedPart(
            store,
            'gzip',
            key,
            encodePart('gzip', theirs),
            theirCounts,
            'done',
            ['a1-first', 'a1-second'],
            linesPartIdentity(job, key),
          );
        }
        // Its second call never leaves: the network is gone.
        if (sent === 2) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1'), { code: 'ECONNREFUSED' });
      },
    });
    try {
      const error = await enrichSingleBatch(
        client,
        store,
        { job, index: 0, options: { limit: 2 } },
        { attempt: 2 },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      const part = (await readPart(store, key, linesPartIdentity(job, key))).part;
      expect(part?.calls).toEqual(['a1-first', 'a1-second']);
      expect(part?.counts).toEqual(theirCounts);
      expect(part?.failed).toBe(false);
    } finally {
      await client.close();
    }
  });
});
