/** Every storage failure: names the store URL and the key (when there is one) and keeps the backend's error. */
export class StorageError extends Error {
  readonly url: string;
  readonly key: string | undefined;
  constructor(message: string, details: { url: string; key?: string; cause?: unknown }) {
    const where = details.key !== undefined ? joinUrl(details.url, details.key) : details.url;
    super(`${message} (${where})`, { cause: details.cause });
    this.name = 'StorageError';
    this.url = details.url;
    this.key = details.key;
  }
}

export class ObjectNotFoundError extends StorageError {
  constructor(details: { url: string; key: string; cause?: unknown }) {
    super('object not found', details);
    this.name = 'ObjectNotFoundError';
  }
}

export class BucketNotFoundError extends StorageError {
  readonly bucket: string;
  constructor(details: { url: string; bucket: string; key?: string; cause?: unknown }) {
    super(`bucket "${details.bucket}" does not exist`, details);
    this.name = 'BucketNotFoundError';
    this.bucket = details.bucket;
  }
}

/** The write was aborted by its caller (or its source failed); nothing was published. */
export class WriteAbortedError extends StorageError {
  constructor(details: { url: string; key: string; cause?: unknown }) {
    const reason = details.cause instanceof Error ? `: ${details.cause.message}` : '';
    super(`write aborted, nothing published${reason}`, details);
    this.name = 'WriteAbortedError';
  }
}

export class InvalidStorageUrlError extends Error {
  readonly input: string;
  constructor(input: string, reason: string) {
    super(`invalid storage URL "${input}": ${reason}`);
    this.name = 'InvalidStorageUrlError';
    this.input = input;
  }
}

/** A storage setting that cannot work (named by its variable); fixing the configuration is the only cure. */
export class StorageConfigError extends Error {
  override readonly name = 'StorageConfigError';
}

/** Wraps a backend error as a StorageError saying which operation failed, unless it already is one. */
export function storageFailure(
  operation: string,
  details: { url: string; key?: string },
  cause: unknown,
): StorageError {
  if (cause instanceof StorageError) return cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new StorageError(`${operation} failed: ${reason}`, { ...details, cause });
}

export function joinUrl(base: string, key: string): string {
  return base.endsWith('/') ? base + key : `${base}/${key}`;
}
