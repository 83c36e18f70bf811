import { FileStore } from './file.ts';
import { type GcsSettings, GcsStore, type GcsStoreOptions } from './gcs.ts';
import { type S3Settings, S3Store, type S3StoreOptions } from './s3.ts';
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
export { type GcsSettings, GcsStore, type GcsStoreOptions, gcsStorage } from './gcs.ts';
export {
  type S3Encryption,
  type S3Settings,
  S3Store,
  type S3StoreOptions,
  s3ClientConfig,
} from './s3.ts';
export type { ObjectInfo, ObjectWriter, Store, WriteOptions } from './store.ts';
export { readAll, readJsonIfPresent, readText, writeStream, writeText } from './store-io.ts';
export { parseStorageUrl, type StorageLocation } from './url.ts';

/** Every bucket store's settings, as config/storage.ts parses them from the environment. */
export interface StorageSettings {
  s3: S3Settings;
  gcs: GcsSettings;
}

export interface OpenStoreOptions {
  s3?: Omit<S3StoreOptions, 'settings'>;
  gcs?: Omit<GcsStoreOptions, 'settings'>;
}

/**
 * The store for a `file://` URL or plain path, an `s3://bucket/prefix` or a `gs://bucket/prefix` URL. `settings`
 * is asked for only by a bucket URL (a function defers its parsing until then).
 */
export function openStoreWith(
  url: string,
  settings: StorageSettings | (() => StorageSettings),
  options: OpenStoreOptions = {},
): Store {
  const location = parseStorageUrl(url);
  const settled = () => (typeof settings === 'function' ? settings() : settings);
  switch (location.scheme) {
    case 'file':
      return new FileStore(location);
    case 's3':
      return new S3Store(location, { ...options.s3, settings: settled().s3 });
    case 'gs':
      return new GcsStore(location, { ...options.gcs, settings: settled().gcs });
  }
}
