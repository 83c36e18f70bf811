/**
 * Issue 35, finding 2 (the reader's side): an 864 KB `.csv.gz` export of 9 M rows reached 3,878 MB in the worker and
 * failed after 420 s. A compressed export is now inflated through once, counted, before a row of it is read, and
 * refused past 64 × its stored size (at least 64 MiB; `gzipInflateLimit`, as `load` caps a part): a job and a sync
 * night on such an export fail with the reason before paying anything, and the worker (a child process, as deployed)
 * stays within idle + 500 MiB, read from its own high-water mark (VmHWM).
 */
import { Readable } from 'node:stream';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryOf } from '../../bench/lib/proc.ts';
import { openStore } from '../../config/storage.ts';
import { gzipInflateLimit } from '../../connectors/jsonl.ts';
import { DEFAULT_ACCOUNT_ID, DEFAULT_KEYS, SANDBOX_EPOCH_MS } from '../../sandbox/index.ts';
import { type ChildWorker, runCli, startChildWorker } from '../../testkit/cli-process.ts';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';

const MiB = 2 ** 20;
const ROWS = 9_000_000;
const ROW = '001A000000BOMB,bomb.example,Software\n';

/**
 * A gzip file of a header and `ROWS` equal rows, its deflate one small block repeated (each flushed to a byte
 * boundary), with a true CRC and length, so that any gunzip reads it to its end as a genuine file.
 */
function bombGzip(): Buffer {
  const header = 'Id,Website,Industry\n';
  const perUnit = 20_000;
  const unit = ROW.repeat(perUnit);
  const block = (text: string) => deflateRawSync(Buffer.from(text), { finishFlush: constants.Z_SYNC_FLUSH });
  const unitBlock = block(unit);
  let crc = crc32(header);
  const unitBytes = Buffer.from(unit);
  for (let i = 0; i < ROWS / perUnit; i++) crc = crc32(unitBytes, crc);
  const size = Buffer.byteLength(header) + unitBytes.length * (ROWS / perUnit);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return Buffer.concat([
    Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]),
    block(header),
    ...Array.from({ length: ROWS / perUnit }, () => unitBlock),
    deflateRawSync(Buffer.alloc(0)),
    trailer,
  ]);
}

describe('drill: an export that inflates far past its size', () => {
  let env: JobEnv;
  let worker: ChildWorker;
  let idleKb: number;
  let bombBytes: number;
  const input = 's3://bombs/exports/accounts.csv.gz';

  beforeAll(async () => {
    env = await startJobEnv({
      s3: true,
      sandbox: {
        seed: 35,
        clock: () => SANDBOX_EPOCH_MS + 30 * 86_400_000,
        accounts: [{ id: DEFAULT_ACCOUNT_ID, keys: [...DEFAULT_KEYS], credits: 10_000_000 }],
      },
    });
    await env.createBuckets('bombs');
    const bomb = bombGzip();
    bombBytes = bomb.length;
    const writer = openStore('s3://bombs').openWrite('exports/accounts.csv.gz');
    Readable.from([bomb]).pipe(writer.stream);
    await writer.done();
    worker = await startChildWorker(env.childEnv());
    idleKb = memoryOf(worker.pid)!.rssKb;
  });
  afterAll(async () => {
    await worker?.kill();
    await env?.stop();
  });

  it('is a small file of 9 M rows, far past its limit', () => {
    expect(bombBytes).toBeLessThan(2 * MiB);
    expect(ROWS * ROW.length).toBeGreaterThan(4 * gzipInflateLimit(bombBytes));
  });

  it('a job on it fails with the reason before anything is paid, the worker within idle + 500 MiB', async () => {
    const mark = env.sandbox.truth.lastCall();
    const result = await runCli(
      ['enrich', '--input', input, '--output', 's3://bombs/out', '--job-id', 'bomb-job', '--wait'],
      env.childEnv(),
      600_000,
    );
    expect(result.code, result.stdout).not.toBe(0);
    expect(result.stderr + result.stdout).toMatch(/inflates past 64 MiB \(64 × its \d+ MiB as stored/);
    expect(env.sandbox.truth.calls({ after: mark }).filter((call) => call.path.includes('enrich'))).toEqual([]);
    const peakKb = memoryOf(worker.pid)!.peakKb;
    expect((peakKb - idleKb) / 1024, `peak ${peakKb} KiB, idle ${idleKb} KiB`).toBeLessThan(500);
  });

  it('a night of the CRM sync on it fails with the reason before anything is paid, the worker within idle + 500 MiB', async () => {
    const mark = env.sandbox.truth.lastCall();
    const c = env.config();
    const failure = await env.client.workflow
      .execute('crmSync', {
        workflowId: 'bomb-night',
        taskQueue: c.taskQueue,
        args: [
          {
            name: 'bomb-night',
            kind: 'enrich',
            input,
            output: 's3://bombs/sync',
            taskQueue: c.taskQueue,
            apiTaskQueue: c.apiTaskQueue,
          },
        ],
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeDefined();
    const chain: string[] = [];
    for (let e = failure as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
      chain.push(e.message ?? '');
    expect(chain.join(' | ')).toMatch(/inflates past 64 MiB/);
    expect(env.sandbox.truth.calls({ after: mark }).filter((call) => call.path.includes('enrich'))).toEqual([]);
    const peakKb = memoryOf(worker.pid)!.peakKb;
    expect((peakKb - idleKb) / 1024, `peak ${peakKb} KiB, idle ${idleKb} KiB`).toBeLessThan(500);
  });
});
