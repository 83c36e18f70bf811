/** Storage failures: the classes live with every other failure rule in connectors/errors.ts. */
import { refusalReason, StorageError, StorageRefusedError } from '../errors.ts';

export {
  BucketNotFoundError,
  InvalidStorageUrlError,
  joinUrl,
  ObjectNotFoundError,
  StorageConfigError,
  StorageError,
  StorageRefusedError,
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
  const refused = refusalReason(cause);
  if (refused)
    return new StorageRefusedError(`${operation} refused (${refused}): ${reason}`, {
      ...details,
      reason: refused,
      cause,
    });
  return new StorageError(`${operation} failed: ${reason}`, { ...details, cause });
}
