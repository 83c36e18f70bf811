import { FileStore } from './file.ts';
import { GcsStore, type GcsStoreOptions } from './gcs.ts';
import { S3Store, type S3StoreOptions } from './s3.ts';
import type { Store } from './store.ts';
import { parseStorageUrl } from './url.ts';

export {
  BucketNotFoundError,
  InvalidStorageUrlError,
  ObjectNotFoundError,
  StorageConfigError,
  StorageError,
  WriteAbortedError,
} from './errors.ts';
export { FileStore } from './file.ts';
export { GcsStore, type GcsStoreOptions, gcsOptionsFromEnv, gcsStorageFromEnv } from './gcs.ts';
export {
  type S3Encryption,
  S3Store,
  type S3StoreOptions,
  s3ConfigFromEnv,
  s3EncryptionFromEnv,
} from './s3.ts';
export type { ObjectInfo, ObjectWriter, Store, WriteOptions } from './store.ts';
export { readAll, readJsonIfPresent, readText, writeStream, writeText } from './store-io.ts';
export { parseStorageUrl, type StorageLocation } from './url.ts';

export interface OpenStoreOptions {
  /** Where the standard AWS / Google variables are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  s3?: Omit<S3StoreOptions, 'env'>;
  gcs?: Omit<GcsStoreOptions, 'env'>;
}

/** The store for a `file://` URL or plain path, an `s3://bucket/prefix` or a `gs://bucket/prefix` URL. */
export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const location = parseStorageUrl(url);
  switch (location.scheme) {
    case 'file':
      return new FileStore(location);
    case 's3':
      return new S3Store(location, { ...options.s3, env: options.env });
    case 'gs':
      return new GcsStore(location, { ...options.gcs, env: options.env });
  }
}
