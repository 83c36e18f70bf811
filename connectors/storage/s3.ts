import { type Readable, Transform } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { mapOrdered } from '../map-ordered.ts';
import { type BucketLocation, BucketStore } from './bucket-store.ts';
import {
  BucketNotFoundError,
  ObjectNotFoundError,
  StorageConfigError,
  type StorageError,
  storageFailure,
  WriteAbortedError,
} from './errors.ts';
import type { ObjectInfo, ObjectWriter, Store, WriteOptions } from './store.ts';
import { readText, writeText } from './store-io.ts';

export interface S3StoreOptions {
  /** A configured client; by default one is built from `settings`. */
  client?: S3Client;
  /** The parsed S3 settings (config/storage.ts); needed unless `client` is given. */
  settings?: S3Settings;
  /**
   * Multipart part size in bytes (S3 minimum 5 MiB) and parts in flight; memory per write is about
   * partSize × (queueSize + 1). The defaults are lib-storage's own (5 MiB × 4): four parts in flight keep a fast
   * download from waiting on the upload, and 10,000 parts of 5 MiB still hold a 48 GiB object.
   */
  partSize?: number;
  queueSize?: number;
  /** Server-side encryption of every object written; by default the settings' (`SIGNAL_KIT_S3_SSE`, `…_KMS_KEY_ID`). */
  encryption?: S3Encryption | null;
  /** Incomplete multipart uploads older than this are aborted by `list()` (default STALE_UPLOAD_MS). */
  staleUploadMs?: number;
}

/**
 * A multipart upload still open after a day was left by a crashed writer (the longest write, an export download,
 * is bounded by its 2-hour activity timeout). Its parts are billed until aborted: `list()`, which every job's
 * finalize runs over its parts, aborts such uploads under the prefix it lists. A bucket lifecycle rule
 * (AbortIncompleteMultipartUpload) covers prefixes the kit never lists again.
 */
export const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000;

export interface S3Encryption {
  serverSideEncryption: 'AES256' | 'aws:kms' | 'aws:kms:dsse';
  /** A KMS key id, ARN or alias; without it S3 uses the account's default KMS key. */
  kmsKeyId?: string;
}

/**
 * S3 as config/storage.ts parsed it from the environment: the client's endpoint, region and keys (each absent: the
 * SDK's default chain), whether checksummed bodies stay signed, and server-side encryption (null: the bucket's
 * default).
 */
export interface S3Settings {
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
  signedPayload: boolean;
  encryption: S3Encryption | null;
}

/**
 * The region of the SDK's own chain (the shared config file's profile, `AWS_PROFILE`, …) for when no variable
 * names one; `us-east-1` only when the chain has none either (S3-compatible servers usually accept it).
 */
async function regionFromChain(): Promise<string> {
  const probe = new S3Client({});
  try {
    return await probe.config.region();
  } catch {
    return 'us-east-1';
  } finally {
    probe.destroy();
  }
}

/**
 * The client configuration of `settings`: a custom endpoint (MinIO, versitygw, ...) gets path-style addressing; on
 * AWS itself a bucket in another region than the client's is followed there. Without a region the SDK's chain
 * decides.
 */
export function s3ClientConfig(settings: S3Settings): S3ClientConfig {
  const { endpoint, credentials } = settings;
  return {
    region: settings.region ?? regionFromChain,
    ...(endpoint ? { endpoint, forcePathStyle: true } : { followRegionRedirects: true }),
    ...(credentials ? { credentials } : {}),
  };
}

/**
 * Uploads whose body carries a checksum S3 verifies (the SDK adds a CRC32 to every part by default) go with an
 * unsigned payload: S3 still rejects a corrupted body by that checksum, and the SDK no longer hashes every byte a
 * second time with SHA-256 for the signature (it does the same for streamed bodies, which it never signs). A body
 * without such a checksum stays signed.
 */
const CHECKSUM_HEADER = /^x-amz-checksum-(crc32|crc32c|crc64nvme|sha1|sha256)$/i;

export function unsignedWhenChecksummed(client: S3Client): S3Client {
  type Step = (args: { request: unknown }) => Promise<unknown>;
  const middleware =
    (next: Step): Step =>
    async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      const headers = request.headers;
      const checksummed = headers && Object.keys(headers).some((name) => CHECKSUM_HEADER.test(name));
      if (headers && checksummed && ArrayBuffer.isView(request.body))
        headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    };
  client.middlewareStack.addRelativeTo(middleware as unknown as Parameters<S3Client['middlewareStack']['add']>[0], {
    name: 'signalKitUnsignedWhenChecksummed',
    relation: 'before',
    toMiddleware: 'httpSigningMiddleware',
  });
  return client;
}

const sharedClients = new Map<string, S3Client>();

/** One client per distinct configuration, so that stores opened per activity share connections. */
function clientFor(settings: S3Settings): S3Client {
  const config = s3ClientConfig(settings);
  const signed = settings.signedPayload;
  const id = JSON.stringify({ config, signed });
  let client = sharedClients.get(id);
  if (!client) {
    client = new S3Client(config);
    if (!signed) unsignedWhenChecksummed(client);
    sharedClients.set(id, client);
  }
  return client;
}

function settingsOf(options: S3StoreOptions): S3Settings {
  if (!options.settings) throw new StorageConfigError('an s3:// store needs its settings (config/storage.ts)');
  return options.settings;
}

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const nameOf = (err: unknown) => (err as { name?: string }).name;

/** `s3://bucket/prefix`: writes stream through a multipart Upload that completes (publishes) atomically. */
export class S3Store extends BucketStore implements Store {
  private readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly encryption: S3Encryption | null;
  private readonly staleUploadMs: number;
  /** The clock that decides when an upload is stale (tests move it). */
  now: () => number = Date.now;
  private bucketChecked = false;

  constructor(location: BucketLocation, options: S3StoreOptions = {}) {
    super(location, 's3');
    this.client = options.client ?? clientFor(settingsOf(options));
    this.partSize = options.partSize ?? 5 * 1024 * 1024;
    this.queueSize = options.queueSize ?? 4;
    this.encryption = options.encryption === undefined ? (options.settings?.encryption ?? null) : options.encryption;
    this.staleUploadMs = options.staleUploadMs ?? STALE_UPLOAD_MS;
  }

  /** Backend error → typed error; a missing bucket is named whatever the operation. */
  private failure(operation: string, key: string | undefined, err: unknown): StorageError {
    if (nameOf(err) === 'NoSuchBucket')
      return new BucketNotFoundError({ url: this.url, bucket: this.bucket, key, cause: err });
    if (key !== undefined && nameOf(err) === 'NoSuchKey')
      return new ObjectNotFoundError({ url: this.url, key, cause: err });
    return storageFailure(operation, { url: this.url, key }, err);
  }

  /** A 404 without a body (HEAD) does not say whether the object or the bucket is missing: ask once. */
  private async checkBucket(key: string | undefined): Promise<void> {
    if (this.bucketChecked) return;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      this.bucketChecked = true;
    } catch (err) {
      if (statusOf(err) === 404 || nameOf(err) === 'NotFound' || nameOf(err) === 'NoSuchBucket') {
        throw new BucketNotFoundError({ url: this.url, bucket: this.bucket, key, cause: err });
      }
      throw this.failure('check bucket', key, err);
    }
  }

  async openRead(key: string): Promise<Readable> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return response.Body as Readable;
    } catch (err) {
      throw this.failure('read', key, err);
    }
  }

  openWrite(key: string, options: WriteOptions = {}): ObjectWriter {
    const details = { url: this.url, key };
    let bytes = 0;
    // The caller's stream is the upload's body itself (one hop). Its readable side hands the upload one written
    // chunk per read (object mode): a byte-mode read would first join everything buffered into a new buffer, a
    // copy of every byte that the upload's own part assembly then copies again. Up to 32 chunks wait in it.
    const stream = new Transform({
      readableObjectMode: true,
      readableHighWaterMark: 32,
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        callback(null, chunk);
      },
    });
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: stream,
        ContentType: options.contentType,
        Metadata: options.metadata,
        ...(this.encryption
          ? { ServerSideEncryption: this.encryption.serverSideEncryption, SSEKMSKeyId: this.encryption.kmsKeyId }
          : {}),
      },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    let aborted: WriteAbortedError | undefined;
    // Started at once so that the body is drained (backpressure) while the caller writes.
    const uploaded = upload.done().then(
      () => ({ key, size: bytes, metadata: { ...options.metadata } }),
      (err: unknown) => {
        const failure = aborted ?? this.failure('write', key, err);
        // A writer blocked on backpressure must learn that nobody reads any more.
        if (!stream.destroyed) stream.destroy(failure);
        throw failure;
      },
    );
    uploaded.catch(() => {});
    // A destroyed body fails the upload (never published). Failures reach the caller through done() (and
    // pipeline()); an unobserved 'error' must not crash the process.
    stream.on('error', () => {});
    stream.once('close', () => {
      if (!stream.writableFinished && !stream.errored)
        aborted ??= new WriteAbortedError({ ...details, cause: undefined });
    });

    return {
      stream,
      done: () => uploaded,
      abort: async (reason?: unknown) => {
        aborted ??= new WriteAbortedError({ ...details, cause: reason });
        if (stream.writableFinished) {
          // The caller ended the stream: the upload may already be completing; abort() can only cancel parts.
          await upload.abort();
        } else {
          stream.destroy(aborted);
        }
        // Resolves once the multipart upload is aborted on the server (or the upload finished anyway).
        await uploaded.catch(() => {});
      },
    };
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { key, size: head.ContentLength ?? 0, metadata: { ...head.Metadata } };
    } catch (err) {
      if (statusOf(err) === 404 || nameOf(err) === 'NotFound' || nameOf(err) === 'NoSuchKey') {
        await this.checkBucket(key);
        return undefined;
      }
      throw this.failure('stat', key, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  /** Aborts the incomplete multipart uploads under `prefix` started more than `staleUploadMs` ago; their count. */
  async abortStaleUploads(prefix: string, now: number = this.now()): Promise<number> {
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page: ListMultipartUploadsCommandOutput = await this.client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const upload of page.Uploads ?? []) {
        const started = upload.Initiated?.getTime();
        if (!upload.Key || !upload.UploadId || started === undefined || now - started < this.staleUploadMs) continue;
        await this.client.send(
          new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }),
        );
        aborted += 1;
      }
      const more = page.IsTruncated === true;
      keyMarker = more ? page.NextKeyMarker : undefined;
      uploadIdMarker = more ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return aborted;
  }

  /** S3 lists no user metadata, so each listed object costs a HEAD (16 in flight). */
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    // Housekeeping, never a reason to fail a listing (some S3-compatible servers lack the multipart listing).
    await this.abortStaleUploads(prefix).catch(() => 0);
    yield* mapOrdered(this.listKeys(prefix), 16, async (key) => {
      const info = await this.stat(key);
      return info ?? { key, size: 0, metadata: {} };
    });
  }

  private async *listKeys(prefix: string): AsyncIterable<string> {
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }),
        );
      } catch (err) {
        throw this.failure('list', prefix, err);
      }
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) yield object.Key.slice(this.prefix.length);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      throw this.failure('delete', key, err);
    }
  }

  readText(key: string): Promise<string> {
    return readText(this, key);
  }

  writeText(key: string, text: string, options?: WriteOptions): Promise<void> {
    return writeText(this, key, text, options);
  }
}
