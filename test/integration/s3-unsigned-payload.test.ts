/**
 * The kit's S3 uploads send part bodies unsigned, guarded by the CRC32 the SDK adds: a body that does not match its
 * checksum must still be refused by the server, and what is stored must be exactly what was written.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStorageSettings } from '../../config/storage.ts';
import { StorageConfigError } from '../../connectors/storage/errors.ts';
import { S3Store, unsignedWhenChecksummed } from '../../connectors/storage/s3.ts';
import { type DevStackWith, startDevStack } from '../../devstack/index.ts';

let stack: DevStackWith<{ temporal: false; s3: true; gcs: false }>;
let s3: S3Client;

beforeAll(async () => {
  stack = await startDevStack({ temporal: false, s3: true, gcs: false });
  s3 = unsignedWhenChecksummed(stack.s3.client());
  await s3.send(new CreateBucketCommand({ Bucket: 'unsigned' }));
});
afterAll(async () => {
  s3?.destroy();
  await stack?.stop();
});

describe('S3 uploads with an unsigned, checksummed payload', () => {
  it('stores a multipart write byte for byte', async () => {
    const store = new S3Store({ url: 's3://unsigned/out', bucket: 'unsigned', prefix: 'out/' }, { client: s3 });
    const chunks = Array.from({ length: 13 }, (_, i) => Buffer.alloc(512 * 1024 + i, 97 + i));
    const writer = store.openWrite('big.jsonl');
    await pipeline(Readable.from(chunks), writer.stream);
    await writer.done();
    const stored: Buffer[] = [];
    for await (const chunk of await store.openRead('big.jsonl')) stored.push(chunk as Buffer);
    const digest = (buffers: Buffer[]) => createHash('sha256').update(Buffer.concat(buffers)).digest('hex');
    expect(digest(stored)).toBe(digest(chunks));
  });

  it('is refused by the server when the body does not match its checksum', async () => {
    const corrupt = unsignedWhenChecksummed(stack.s3.client());
    // After the checksum is computed and before the request is sent, one byte of the body changes.
    corrupt.middlewareStack.add(
      (next) => async (args) => {
        const body = (args.request as { body?: unknown }).body;
        if (body instanceof Uint8Array)
          (args.request as { body: Uint8Array }).body = Buffer.from(body).fill(0x7a, 0, 1);
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    try {
      await expect(
        corrupt.send(new PutObjectCommand({ Bucket: 'unsigned', Key: 'corrupt.txt', Body: Buffer.from('{"a":1}\n') })),
      ).rejects.toThrow(/checksum/i);
    } finally {
      corrupt.destroy();
    }
  });

  it('signs every body when SIGNAL_KIT_S3_SIGNED_PAYLOAD=true, and names the variable when its value is not a boolean', async () => {
    const env = { ...process.env, ...stack.env(), SIGNAL_KIT_S3_SIGNED_PAYLOAD: 'true' };
    const store = new S3Store(
      { url: 's3://unsigned/signed', bucket: 'unsigned', prefix: 'signed/' },
      { settings: parseStorageSettings(env).s3 },
    );
    const sent: string[] = [];
    (store as unknown as { client: S3Client }).client.middlewareStack.add(
      (next) => async (args) => {
        const headers = (args.request as { headers: Record<string, string> }).headers;
        sent.push(headers['x-amz-content-sha256'] ?? '');
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    await store.writeText('a.json', '{"a":1}');
    expect(await store.readText('a.json')).toBe('{"a":1}');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent).not.toContain('UNSIGNED-PAYLOAD');
    expect(() => parseStorageSettings({ SIGNAL_KIT_S3_SIGNED_PAYLOAD: 'yes' })).toThrow(StorageConfigError);
    expect(() => parseStorageSettings({ SIGNAL_KIT_S3_SIGNED_PAYLOAD: 'yes' })).toThrow(/SIGNAL_KIT_S3_SIGNED_PAYLOAD/);
  });
});
