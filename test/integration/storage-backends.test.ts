import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, parseStorageSettings } from '../../config/storage.ts';
import {
  BucketNotFoundError,
  GcsStore,
  gcsStorage,
  S3Store,
  type Store,
  writeStream,
} from '../../connectors/storage/index.ts';
import { type DevStackWith, startDevStack } from '../../devstack/index.ts';
import { describeStoreContract } from '../helpers/store-contract.ts';
import { pseudoRandomBytes, sha256OfStream } from './helpers/bytes.ts';

const MiB = 1024 * 1024;
let stack: DevStackWith<{ temporal: false; s3: true; gcs: true }>;
let s3: S3Client;
let gcs: Storage;
const fileRoot = mkdtempSync(join(tmpdir(), 'signal-kit-backends-'));
let count = 0;
const unique = () => `run-${Date.now()}-${count++}`;

beforeAll(async () => {
  stack = await startDevStack({ temporal: false, s3: true, gcs: true });
  // As a worker or the CLI would see them: the standard variables, read by the stores and the Google client.
  Object.assign(process.env, stack.env());
  s3 = stack.s3.client();
  gcs = gcsStorage(parseStorageSettings().gcs);
  await s3.send(new CreateBucketCommand({ Bucket: 'parts' }));
  await gcs.createBucket('parts');
});
afterAll(async () => {
  s3?.destroy();
  await stack?.stop();
  rmSync(fileRoot, { recursive: true, force: true });
});

// Larger than two 8 MiB parts, so writes are real multipart uploads (S3) and multi-request streams (GCS).
describeStoreContract('s3://', () => openStore(`s3://parts/contract/${unique()}`), { bigSize: 20 * MiB + 5 });
describeStoreContract('gs://', () => openStore(`gs://parts/contract/${unique()}`), { bigSize: 20 * MiB + 5 });

describe('S3 store', () => {
  it('is built from the standard AWS variables and keys are relative to the URL prefix', async () => {
    const store = openStore('s3://parts/out/jobs');
    expect(store).toBeInstanceOf(S3Store);
    await store.writeText('J1/_manifest.json', '{"ok":true}');
    const raw = await s3.send(new GetObjectCommand({ Bucket: 'parts', Key: 'out/jobs/J1/_manifest.json' }));
    expect(await raw.Body?.transformToString()).toBe('{"ok":true}');
    expect(store.urlOf('J1/_manifest.json')).toBe('s3://parts/out/jobs/J1/_manifest.json');
  });

  it('leaves no pending multipart upload behind after an aborted write', async () => {
    const prefix = `aborted-${unique()}/`;
    const store = openStore(`s3://parts/${prefix}`);
    const writer = store.openWrite('part-00000.jsonl.gz');
    const done = writer.done();
    done.catch(() => {});
    let sent = 0;
    for (const chunk of pseudoRandomBytes(40 * MiB, 9)) {
      if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
      sent += chunk.length;
      if (sent > 18 * MiB) break; // at least two parts uploaded
    }
    await writer.abort();
    await expect(done).rejects.toThrow(/aborted/);
    const pending = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'parts', Prefix: prefix }));
    expect(pending.Uploads ?? []).toEqual([]);
    expect(await store.exists('part-00000.jsonl.gz')).toBe(false);
  });

  it('names a missing bucket', async () => {
    const store = openStore('s3://no-such-bucket/x');
    await expect(store.openRead('a.jsonl')).rejects.toThrow(BucketNotFoundError);
    await expect(store.openRead('a.jsonl')).rejects.toThrow(/bucket "no-such-bucket" does not exist/);
    await expect(store.stat('a.jsonl')).rejects.toThrow(BucketNotFoundError);
    await expect(store.writeText('a.jsonl', 'x')).rejects.toThrow(BucketNotFoundError);
    await expect(writeStream(store, 'b.jsonl', Readable.from(pseudoRandomBytes(12 * MiB, 1)))).rejects.toThrow(
      BucketNotFoundError,
    );
    await expect(async () => {
      for await (const _ of store.list('')) break;
    }).rejects.toThrow(BucketNotFoundError);
  });
});

describe('GCS store', () => {
  it('never finalizes an aborted resumable upload, even a moment later', async () => {
    const store = openStore(`gs://parts/aborted-${unique()}`);
    const writer = store.openWrite('part-00000.jsonl');
    writer.done().catch(() => {}); // settled below, once aborted
    let sent = 0;
    for (const chunk of pseudoRandomBytes(40 * MiB, 13)) {
      if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
      sent += chunk.length;
      if (sent > 10 * MiB) break;
    }
    await writer.abort();
    // Once the upload has settled (rejected), an aborted upload that could still finalize would be visible.
    await expect(writer.done()).rejects.toBeDefined();
    expect(await store.exists('part-00000.jsonl')).toBe(false);
    const [files] = await gcs.bucket('parts').getFiles({ prefix: store.url.slice('gs://parts/'.length) });
    expect(files).toEqual([]);
  });

  it('is built from STORAGE_EMULATOR_HOST and keys are relative to the URL prefix', async () => {
    const store = openStore('gs://parts/out/jobs');
    expect(store).toBeInstanceOf(GcsStore);
    await store.writeText('J1/_manifest.json', '{"ok":true}', { contentType: 'application/json' });
    const [raw] = await gcs.bucket('parts').file('out/jobs/J1/_manifest.json').download();
    expect(raw.toString()).toBe('{"ok":true}');
    expect(store.urlOf('J1/_manifest.json')).toBe('gs://parts/out/jobs/J1/_manifest.json');
  });

  it('names a missing bucket', async () => {
    const store = openStore('gs://no-such-bucket/x');
    await expect(store.openRead('a.jsonl')).rejects.toThrow(/bucket "no-such-bucket" does not exist/);
    await expect(store.stat('a.jsonl')).rejects.toThrow(BucketNotFoundError);
    await expect(store.writeText('a.jsonl', 'x')).rejects.toThrow(BucketNotFoundError);
    await expect(async () => {
      for await (const _ of store.list('')) break;
    }).rejects.toThrow(BucketNotFoundError);
  });
});

describe('all three backends', () => {
  it('read back identical objects and listings for the same data', async () => {
    const run = unique();
    const stores: Store[] = [
      openStore(pathToFileURL(join(fileRoot, run)).href),
      openStore(`s3://parts/same/${run}`),
      openStore(`gs://parts/same/${run}`),
    ];
    const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ i, domain: `d${i}.example` })).join('\n');
    const expected = createHash('sha256').update(lines).digest('hex');
    for (const store of stores) {
      await writeStream(store, 'J/parts/part-00000.jsonl', Readable.from([Buffer.from(lines)]), {
        metadata: { lines: '50000' },
      });
      await store.writeText('J/_manifest.json', '{"parts":1}');
    }
    const views = await Promise.all(
      stores.map(async (store) => {
        const listed = [];
        for await (const info of store.list('J/')) listed.push(info);
        return { listed, sha256: await sha256OfStream(await store.openRead('J/parts/part-00000.jsonl')) };
      }),
    );
    for (const view of views) {
      expect(view.sha256).toBe(expected);
      expect(view.listed).toEqual(views[0]?.listed);
    }
    expect(views[0]?.listed).toEqual([
      { key: 'J/_manifest.json', size: 11, metadata: {} },
      { key: 'J/parts/part-00000.jsonl', size: Buffer.byteLength(lines), metadata: { lines: '50000' } },
    ]);
  });
});
