import { type Readable, Transform, type Writable } from 'node:stream';
import { type File, type GetFilesResponse, Storage } from '@google-cloud/storage';
import { type BucketLocation, BucketStore } from './bucket-store.ts';
import {
  BucketNotFoundError,
  ObjectNotFoundError,
  type StorageError,
  storageFailure,
  WriteAbortedError,
} from './errors.ts';
import type { ObjectInfo, ObjectWriter, Store, WriteOptions } from './store.ts';
import { readText, writeText } from './store-io.ts';

/**
 * GCS as config/storage.ts parsed it from the environment: an emulator's endpoint (STORAGE_EMULATOR_HOST, no
 * credentials) or none (application default credentials), and the project when one is named.
 */
export interface GcsSettings {
  apiEndpoint?: string;
  projectId?: string;
}

export interface GcsStoreOptions {
  /** A configured client; by default one is built from `settings`. */
  storage?: Storage;
  /** The parsed GCS settings (config/storage.ts); none: application default credentials. */
  settings?: GcsSettings;
}

/** A Storage client for `settings`. */
export function gcsStorage(settings: GcsSettings): Storage {
  const storage = new Storage({ ...settings });
  // With STORAGE_EMULATOR_HOST in process.env the Node client sends JSON API calls to that host's root, while
  // emulators (fake-gcs-server) and the other Google clients serve them under /storage/v1.
  if (settings.apiEndpoint) storage.baseUrl = `${settings.apiEndpoint.replace(/\/+$/, '')}/storage/v1`;
  return storage;
}

const sharedClients = new Map<string, Storage>();

/** One client per distinct configuration, so that stores opened per activity share connections. */
function storageFor(settings: GcsSettings): Storage {
  const id = JSON.stringify(settings);
  let storage = sharedClients.get(id);
  if (!storage) {
    storage = gcsStorage(settings);
    sharedClients.set(id, storage);
  }
  return storage;
}

const codeOf = (err: unknown) => (err as { code?: number | string }).code;

/** Custom metadata values come back as strings, numbers, booleans or null; the Store speaks strings. */
function stringMetadata(metadata: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) if (value != null) out[key] = String(value);
  return out;
}

/** `gs://bucket/prefix`: writes are resumable uploads, which the server finalizes (publishes) atomically. */
export class GcsStore extends BucketStore implements Store {
  private readonly storage: Storage;
  private bucketChecked = false;

  constructor(location: BucketLocation, options: GcsStoreOptions = {}) {
    super(location, 'gs');
    this.storage = options.storage ?? storageFor(options.settings ?? {});
  }

  private file(key: string, generation?: number | string): File {
    return this.storage.bucket(this.bucket).file(this.objectKey(key), generation ? { generation } : {});
  }

  /** A 404 does not say whether the object or the bucket is missing: ask once. */
  private async checkBucket(key: string | undefined): Promise<void> {
    if (this.bucketChecked) return;
    let exists: boolean;
    try {
      [exists] = await this.storage.bucket(this.bucket).exists();
    } catch (err) {
      throw storageFailure('check bucket', { url: this.url, key }, err);
    }
    if (!exists) throw new BucketNotFoundError({ url: this.url, bucket: this.bucket, key });
    this.bucketChecked = true;
  }

  private async metadataOf(
    key: string,
  ): Promise<{ size: number; generation?: string; metadata: Record<string, string> } | undefined> {
    try {
      const [meta] = await this.file(key).getMetadata();
      return {
        size: Number(meta.size ?? 0),
        generation: meta.generation !== undefined ? String(meta.generation) : undefined,
        metadata: stringMetadata(meta.metadata as Record<string, unknown> | undefined),
      };
    } catch (err) {
      if (codeOf(err) === 404) {
        await this.checkBucket(key);
        return undefined;
      }
      throw storageFailure('stat', { url: this.url, key }, err);
    }
  }

  async openRead(key: string): Promise<Readable> {
    const meta = await this.metadataOf(key);
    if (!meta) throw new ObjectNotFoundError({ url: this.url, key });
    // Pinned to the generation just seen, so a concurrent overwrite cannot mix two versions.
    return this.file(key, meta.generation).createReadStream();
  }

  openWrite(key: string, options: WriteOptions = {}): ObjectWriter {
    const details = { url: this.url, key };
    let bytes = 0;
    const stream = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        callback(null, chunk);
      },
    });
    const upload: Writable = this.file(key).createWriteStream({
      resumable: true,
      contentType: options.contentType,
      metadata: options.metadata ? { metadata: options.metadata } : undefined,
    });
    stream.pipe(upload);
    // Failures reach the caller through done() (and pipeline()); an unobserved 'error' must not crash the process.
    stream.on('error', () => {});
    let aborted: WriteAbortedError | undefined;

    const mapError = (err: unknown): StorageError => {
      if (aborted) return aborted;
      if (codeOf(err) === 404) return new BucketNotFoundError({ url: this.url, bucket: this.bucket, key, cause: err });
      return storageFailure('write', details, err);
    };
    // The upload's stream finishes only once the server has finalized the object.
    const uploaded = new Promise<ObjectInfo>((resolve, reject) => {
      upload.once('finish', () => resolve({ key, size: bytes, metadata: { ...options.metadata } }));
      upload.on('error', (err) => reject(mapError(err)));
      upload.once('close', () => {
        if (!upload.writableFinished) reject(mapError(new Error('upload closed before it finished')));
      });
    });
    uploaded.catch((err: unknown) => {
      if (!stream.destroyed) stream.destroy(err as Error);
    });
    // A failing or destroyed source must cancel the upload rather than finalize what arrived so far.
    stream.once('close', () => {
      if (!stream.writableFinished && !upload.destroyed) upload.destroy(aborted ?? new WriteAbortedError(details));
    });

    return {
      stream,
      done: () => uploaded,
      abort: async (reason?: unknown) => {
        aborted ??= new WriteAbortedError({ ...details, cause: reason });
        if (!stream.destroyed) stream.destroy(aborted);
        if (!upload.destroyed) upload.destroy(aborted);
        await uploaded.catch(() => {});
      },
    };
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    const meta = await this.metadataOf(key);
    return meta && { key, size: meta.size, metadata: meta.metadata };
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    let pageToken: string | undefined;
    do {
      let response: GetFilesResponse;
      try {
        response = await this.storage
          .bucket(this.bucket)
          .getFiles({ prefix: this.prefix + prefix, autoPaginate: false, maxResults: 1000, pageToken });
      } catch (err) {
        if (codeOf(err) === 404) throw new BucketNotFoundError({ url: this.url, bucket: this.bucket, cause: err });
        throw storageFailure('list', { url: this.url, key: prefix }, err);
      }
      const [files, next] = response;
      for (const file of files) {
        yield {
          key: file.name.slice(this.prefix.length),
          size: Number(file.metadata.size ?? 0),
          metadata: stringMetadata(file.metadata.metadata as Record<string, unknown> | undefined),
        };
      }
      pageToken = (next as { pageToken?: string } | null)?.pageToken; // null after the last page
    } while (pageToken);
  }

  async delete(key: string): Promise<void> {
    try {
      await this.file(key).delete();
    } catch (err) {
      if (codeOf(err) === 404) {
        await this.checkBucket(key);
        return;
      }
      throw storageFailure('delete', { url: this.url, key }, err);
    }
  }

  readText(key: string): Promise<string> {
    return readText(this, key);
  }

  writeText(key: string, text: string, options?: WriteOptions): Promise<void> {
    return writeText(this, key, text, options);
  }
}
