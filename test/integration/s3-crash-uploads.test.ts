/** Multipart uploads left open by a crashed writer are aborted (their parts are billed until then). */
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import { S3Store } from '../../connectors/storage/index.ts';
import { STALE_UPLOAD_MS } from '../../connectors/storage/s3.ts';
import { type DevStackWith, startDevStack } from '../../devstack/index.ts';

let stack: DevStackWith<{ temporal: false; s3: true; gcs: false }>;
let s3: S3Client;

beforeAll(async () => {
  stack = await startDevStack({ temporal: false, s3: true, gcs: false });
  Object.assign(process.env, stack.env());
  s3 = stack.s3.client();
  await s3.send(new CreateBucketCommand({ Bucket: 'crash' }));
});
afterAll(async () => {
  s3?.destroy();
  await stack?.stop();
});

/** What a worker killed in the middle of a part's multipart upload leaves behind. */
async function crashedUpload(key: string): Promise<void> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'crash', Key: key }));
  await s3.send(
    new UploadPartCommand({ Bucket: 'crash', Key: key, UploadId, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024) }),
  );
}

const pending = async (prefix: string) =>
  (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'crash', Prefix: prefix }))).Uploads ?? [];

describe('S3: incomplete multipart uploads after a crash', () => {
  it('listing the parts keeps an upload that may still be running, and aborts one older than a day', async () => {
    await crashedUpload('out/job-1/parts/part-00003.jsonl.gz');
    await crashedUpload('out/other-job/parts/part-00000.jsonl.gz');
    const store = openStore('s3://crash/out') as S3Store;
    expect(store).toBeInstanceOf(S3Store);

    for await (const _ of store.list('job-1/parts/')) {
      // nothing published yet
    }
    expect(await pending('out/job-1/')).toHaveLength(1);

    store.now = () => Date.now() + STALE_UPLOAD_MS + 60_000;
    for await (const _ of store.list('job-1/parts/')) {
      // housekeeping happens on the way
    }
    expect(await pending('out/job-1/')).toEqual([]);
    // Only under the prefix listed.
    expect(await pending('out/other-job/')).toHaveLength(1);
  });
});
