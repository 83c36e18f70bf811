import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { describe, expect, it } from 'vitest';
import { pseudoRandomBytes, sha256OfStream } from './helpers/bytes.ts';
import { useS3Bucket } from './helpers/storage-stack.ts';

describe('dev stack: S3', () => {
  const bucket = 'smoke';
  const s3 = useS3Bucket(bucket);

  it('puts, gets, lists and deletes objects', async () => {
    const put = await s3().send(new PutObjectCommand({ Bucket: bucket, Key: 'a/one.txt', Body: 'one' }));
    // The SDK sends a CRC32 flexible checksum by default; the server must accept and verify it.
    expect(put.ChecksumCRC32).toBeTruthy();
    await s3().send(new PutObjectCommand({ Bucket: bucket, Key: 'a/two.txt', Body: 'two' }));
    const got = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: 'a/one.txt' }));
    expect(await got.Body?.transformToString()).toBe('one');

    const listed = await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'a/' }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([
      ['a/one.txt', 3],
      ['a/two.txt', 3],
    ]);

    await s3().send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a/one.txt' }));
    const after = await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'a/' }));
    expect(after.Contents?.map((o) => o.Key)).toEqual(['a/two.txt']);
  });

  it('streams a >20 MiB multipart upload through lib-storage and reads it back byte-identical', async () => {
    const size = 21 * 1024 * 1024 + 12_345;
    const expected = createHash('sha256');
    const source = Readable.from(pseudoRandomBytes(size, 7, (chunk) => expected.update(chunk)));
    const upload = new Upload({
      client: s3(),
      params: { Bucket: bucket, Key: 'big/blob.bin', Body: source },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    });
    const parts = new Set<number>();
    upload.on('httpUploadProgress', (p) => {
      if (p.part !== undefined) parts.add(p.part);
    });
    const done = await upload.done();
    expect(parts.size).toBeGreaterThan(1);
    expect(done.ChecksumCRC32).toBeTruthy();

    const got = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: 'big/blob.bin' }));
    expect(got.ContentLength).toBe(size);
    expect(await sha256OfStream(got.Body as Readable)).toBe(expected.digest('hex'));
  });
});
