/**
 * A storage that refuses a paid answer's part for a reason waiting does not cure (a full disk, a quota, access
 * denied) stops the batch at once, not after a minute of retries, with a failure that is not retried and ends the
 * job; the answer is kept in the worker's spool, and running the batch again, once the storage is fixed, publishes
 * it without paying again. What the service charged is what its answers said (`x-credits-charged`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichBatch } from '../../../activities/jobs/enrich.ts';
import { enrichSingleBatch } from '../../../activities/jobs/enrich-single.ts';
import { finalizeJob } from '../../../activities/jobs/finalize.ts';
import { batchKey, partKey, singleBatchKey, singlePartKey } from '../../../activities/jobs/layout.ts';
import { linesPartIdentity } from '../../../activities/jobs/part-identity.ts';
import type { JobRef } from '../../../activities/jobs/types.ts';
import { PartSpool } from '../../../activities/paid/spool.ts';
import {
  partFingerprint,
  readPartLines,
  spooledPartProblem,
  writePart,
  zeroCounts,
} from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { FAILURE_TYPE, refusalReason, StorageRefusedError } from '../../../connectors/errors.ts';
import { SignalClient } from '../../../connectors/signal-api/index.ts';
import { storageFailure } from '../../../connectors/storage/errors.ts';
import type { Store } from '../../../connectors/storage/store.ts';
import { DEFAULT_KEYS, startSandbox } from '../../../sandbox/index.ts';
import { toActivityFailure } from '../../../workers/activity-failures.ts';
import { isFatalFailure } from '../../../workflows/activity-options.ts';
import { finalizeCompleted } from '../../helpers/finalize.ts';
import { refusingStore } from '../../helpers/refusing-store.ts';
import { type RecordedRequest, sendJson, signalBody, startTestServer, type TestServer } from '../client/server.ts';

let server: TestServer;
let dir: string;
let charged = 0;

beforeAll(async () => {
  server = await startTestServer((req: RecordedRequest, res) => {
    const { domains } = req.json as { domains: string[] };
    const results = domains.map((domain) => ({
      domain,
      status: 'ok',
      company: { name: domain, domain },
      signals: [signalBody(`sig_${domain}_1`)],
    }));
    charged += domains.length * 2;
    sendJson(res, 200, { results }, { 'x-credits-charged': domains.length * 2 });
  });
  dir = await mkdtemp(join(tmpdir(), 'storage-refused-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Job `jobId`'s one batch of two domains, written under a fresh output, and a client of the test server. */
async function twoDomainBatch(jobId: string, formats?: JobRef['formats']) {
  const output = pathToFileURL(join(dir, `out-${jobId}`)).href;
  const store = openStore(output);
  const job: JobRef = { jobId, kind: 'enrich', output, ...(formats ? { formats } : {}) };
  await store.writeText(batchKey(job, 0), '{"v":"a.com","row":1,"raw":"a.com"}\n{"v":"b.com","row":2,"raw":"b.com"}\n');
  const client = new SignalClient({ baseUrl: server.url, apiKey: 'sk_test_full', retry: false });
  return { store, job, client, request: { job, index: 0, options: {} } };
}

/** The manifest's figures for that job, once its one batch ran. */
function finalizeTwoDomains(store: Store, job: JobRef) {
  return finalizeCompleted(store, job, 2);
}

describe('a storage that refuses the answer stops the job before the next paid call, and keeps the answer', () => {
  it.each([
    ['ENOSPC', { code: 'ENOSPC' }],
    ['EDQUOT', { code: 'EDQUOT' }],
    ['EROFS', { code: 'EROFS' }],
    ['EACCES', { code: 'EACCES' }],
    ['S3 AccessDenied', { name: 'AccessDenied' }],
    ['GCS 403', { code: 403 }],
  ])('%s is a refusal no retry cures, and ends the job', (_reason, fields) => {
    const error = storageFailure('write', { url: 'file:///x', key: 'k' }, Object.assign(new Error('refused'), fields));
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect(error.retryable).toBe(false);
    expect(refusalReason(Object.assign(new Error('x'), fields))).toBeTruthy();
    const failure = toActivityFailure(error) as { type?: string; nonRetryable?: boolean };
    expect(failure.type).toBe(FAILURE_TYPE.storageRefused);
    expect(failure.nonRetryable).toBe(true);
    expect(isFatalFailure(failure)).toBe(true);
  });

  it('an outage (a reset connection) is still retried', () => {
    const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(storageFailure('write', { url: 's3://b', key: 'k' }, cause).retryable).toBe(true);
  });

  it.each([
    ['the lines part', 'refused', undefined],
    ['the tables written before it (--format csv)', 'refused-tables', ['jsonl', 'csv'] as JobRef['formats']],
    [
      'the lines part only, its tables written (the disk filled in between)',
      'refused-after-tables',
      ['jsonl', 'csv', 'parquet'] as JobRef['formats'],
      (key: string) => key.includes('/parts/'),
    ],
  ])(
    'ENOSPC on %s: one paid call, refused at once, published from the spool by the next run without paying',
    async (_what, jobId, formats, refused?: (key: string) => boolean) => {
      const { store, job, client, request } = await twoDomainBatch(jobId, formats);
      const calls = server.requests.length;
      charged = 0;
      const spool = new PartSpool(join(dir, 'spool'));

      const refusals: string[] = [];
      const onRefused = (key: string) => refusals.push(key);
      const full = refusingStore(store, refused ? { refused, onRefused } : { onRefused });
      const error = await enrichBatch(client, full, request, { attempt: 1, spool }).catch((e) => e);
      expect(error).toBeInstanceOf(StorageRefusedError);
      // Refused at once: one write was tried and refused, not retried like an outage is.
      expect(refusals).toHaveLength(1);
      expect(server.requests).toHaveLength(calls + 1);

      // The disk is freed; the same batch runs again (a re-run of the job): its answer comes from the spool.
      const again = await enrichBatch(client, store, request, { attempt: 1, spool });
      expect(again.counts.ok).toBe(2);
      expect(server.requests).toHaveLength(calls + 1);
      const result = await finalizeTwoDomains(store, job);
      expect(charged).toBe(4);
      expect(result.credits).toBe(charged);
      expect(result.unsavedAnswers).toEqual({ credits: 0, unknown_calls: 0 });
      if (formats) {
        // The tables were kept and published too.
        const keys: string[] = [];
        for await (const info of store.list(`${jobId}/`)) keys.push(info.key);
        const tables = keys.filter((key) => key.includes('/tables/'));
        expect(tables).toHaveLength(2 * formats.length); // rows and signals, in each format
        // Each as written: the bytes its metadata records.
        for (const key of tables) {
          const info = await store.stat(key);
          const body = Buffer.from(
            await new Response(Readable.toWeb(await store.openRead(key)) as ReadableStream).arrayBuffer(),
          );
          expect(spooledPartProblem(key, body, info?.metadata), key).toBeUndefined();
        }
      }
      await client.close();
    },
  );

  it('a part another worker saved since wins over the spooled answer, which the manifest counts as paid and not saved', async () => {
    const { store, job, client, request } = await twoDomainBatch('refused-elsewhere');
    charged = 0;
    const spool = new PartSpool(join(dir, 'spool-elsewhere'));
    // Worker A: the output refuses the answer, which waits in A's spool.
    const refused = await enrichBatch(client, refusingStore(store), request, { attempt: 1, spool }).catch((e) => e);
    expect(refused).toBeInstanceOf(StorageRefusedError);
    // The output is fixed and the job runs again on worker B, which has no copy: it pays again and saves the batch.
    expect((await enrichBatch(client, store, request, { attempt: 1 })).reused).toBe(false);
    const saved = await partFingerprint(store, partKey(job, 0));

    // Worker A serves the job later: its copy does not replace the part B saved.
    expect((await enrichBatch(client, store, request, { attempt: 1, spool })).reused).toBe(true);
    expect(await partFingerprint(store, partKey(job, 0))).toBe(saved);
    const result = await finalizeTwoDomains(store, job);
    expect(charged).toBe(8);
    expect(result.credits).toBe(charged);
    expect(result.unsavedAnswers).toEqual({ credits: 4, unknown_calls: 0 });
    await client.close();
  });
});

describe('a failed job whose output refuses its manifest too (a disk with no room at all)', () => {
  it('still says what it was charged: the answer refused, counted with its credits', async () => {
    const { store, job, client, request } = await twoDomainBatch('refused-manifest');
    charged = 0;
    const full = refusingStore(store);
    const spool = new PartSpool(join(dir, 'spool-manifest'));
    expect(await enrichBatch(client, full, request, { attempt: 1, spool }).catch((e) => e)).toBeInstanceOf(
      StorageRefusedError,
    );
    const result = await finalizeJob(full, {
      job,
      input: 'x',
      startedAt: new Date().toISOString(),
      status: 'failed',
      error: 'write refused (ENOSPC)',
    });
    expect(charged).toBe(4);
    expect(result.credits).toBe(charged);
    expect(result.unsavedAnswers).toEqual({ credits: charged, unknown_calls: 0 });
    expect(result.manifestRefused).toMatch(/ENOSPC/);
    expect(await store.exists(`${job.jobId}/_manifest.json`)).toBe(false);
    // A job that did not fail still fails on a refused manifest: it has nothing else to say it finished.
    await expect(
      finalizeJob(full, { job, input: 'x', startedAt: new Date().toISOString(), status: 'completed' }),
    ).rejects.toBeInstanceOf(StorageRefusedError);
    await client.close();
  });
});

describe('a batch of single calls already running stops before its next call once the output refused the job', () => {
  it('keeps what it answered in the spool, and the next run pays only for the rest', async () => {
    const sandbox = await startSandbox({ rateLimitPerMinute: 0 });
    const output = pathToFileURL(join(dir, 'out-singles')).href;
    const store = openStore(output);
    const job: JobRef = { jobId: 'refused-singles', kind: 'enrich', output };
    const names = ['Refused Alpha', 'Refused Beta', 'Refused Gamma', 'Refused Delta', 'Refused Epsilon'];
    await store.writeText(
      singleBatchKey(job, 0),
      names
        .map((name, i) => JSON.stringify({ v: name.toLowerCase(), row: i + 1, raw: name, s: name, m: 'company_name' }))
        .join('\n'),
    );
    const spool = new PartSpool(join(dir, 'spool-singles'));
    const refusing = refusingStore(store);
    let sent = 0;
    // While this batch's second call is on its way, another batch of the job has its answer refused and spooled.
    const client = new SignalClient({
      baseUrl: sandbox.url,
      apiKey: DEFAULT_KEYS[0]!,
      retry: false,
      beforeRequest: async () => {
        sent += 1;
        if (sent === 2)
          await writePart(
            spool.keepOnly(refusing, { key: partKey(job, 3), fingerprint: undefined }),
            'gzip',
            partKey(job, 3),
            ['another batch'],
            { ...zeroCounts(), lines: 1 },
            'done',
            [],
            linesPartIdentity(job, partKey(job, 3)),
          );
      },
    });
    const request = { job, index: 0, options: { limit: 2 } };
    const mark = sandbox.truth.lastCall();
    try {
      const error = await enrichSingleBatch(client, refusing, request, { attempt: 1, spool }).catch((e) => e);
      expect(error).toBeInstanceOf(StorageRefusedError);
      expect(sandbox.truth.calls({ after: mark, path: '/v1/companies/enrich' })).toHaveLength(2);

      // The output takes writes again: both kept parts are published, and only the three other names are sent.
      const again = await enrichSingleBatch(client, store, request, { attempt: 1, spool });
      expect(again.counts.lines).toBe(names.length);
      expect(sandbox.truth.calls({ after: mark, path: '/v1/companies/enrich' })).toHaveLength(names.length);
      expect(await readPartLines(store, partKey(job, 3))).toEqual(['another batch']);
      expect(await store.exists(singlePartKey(job, 0))).toBe(true);
    } finally {
      await client.close();
      await sandbox.stop();
    }
  });
});
