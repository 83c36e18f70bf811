/** Storage failures: the classes live with every other failure rule in connectors/errors.ts. */
import { StorageError } from '../errors.ts';

export {
  BucketNotFoundError,
  InvalidStorageUrlError,
  joinUrl,
  ObjectNotFoundError,
  StorageConfigError,
  StorageError,
  WriteAbortedError,
} from '../errors.ts';

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
