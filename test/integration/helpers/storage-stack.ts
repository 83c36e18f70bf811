/**
 * A test file's storage server: a dev stack with S3 or GCS alone, started before the file's tests with one bucket
 * made, and stopped after them. The returned function hands out the server's client once it is up.
 */
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Storage } from '@google-cloud/storage';
import { afterAll, beforeAll } from 'vitest';
import { type DevStack, startDevStack } from '../../../devstack/index.ts';

interface StorageServer<C> {
  service: 's3' | 'gcs';
  open(stack: DevStack): C;
  createBucket(client: C, bucket: string): Promise<unknown>;
  close?(client: C): void;
}

function useStorageServer<C>(server: StorageServer<C>, bucket: string): () => C {
  let stack: DevStack | undefined;
  let client: C | undefined;
  beforeAll(async () => {
    stack = await startDevStack({ temporal: false, s3: server.service === 's3', gcs: server.service === 'gcs' });
    client = server.open(stack);
    await server.createBucket(client, bucket);
  });
  afterAll(async () => {
    if (client !== undefined) server.close?.(client);
    await stack?.stop();
  });
  return () => {
    if (client === undefined) throw new Error(`the ${server.service} server of this file is not up`);
    return client;
  };
}

export const useS3Bucket = (bucket: string): (() => S3Client) =>
  useStorageServer<S3Client>(
    {
      service: 's3',
      open: (stack) => (stack.s3 as NonNullable<DevStack['s3']>).client(),
      createBucket: (s3, name) => s3.send(new CreateBucketCommand({ Bucket: name })),
      close: (s3) => s3.destroy(),
    },
    bucket,
  );

export const useGcsBucket = (bucket: string): (() => Storage) =>
  useStorageServer<Storage>(
    {
      service: 'gcs',
      open: (stack) => (stack.gcs as NonNullable<DevStack['gcs']>).client(),
      createBucket: (storage, name) => storage.createBucket(name),
    },
    bucket,
  );
