import { storageFailure } from '../../connectors/storage/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';

/** By default a job's outputs are refused and its `work/` (batch files, call markers) is still written. */
const OUTPUTS = (key: string) => !key.includes('/work/');

/**
 * `store` as an output that refuses some writes for good: each write of a key `refused` picks fails with Node's
 * error `code` (ENOSPC: a full disk) through the store's own error mapping, as a full or denied output fails.
 * `while` turns the refusal on and off (the disk freed between two runs); always on when absent.
 */
export function refusingStore(
  store: Store,
  options: { refused?: (key: string) => boolean; code?: string; while?: () => boolean } = {},
): Store {
  const { refused = OUTPUTS, code = 'ENOSPC' } = options;
  const refusing = Object.create(store) as Store;
  refusing.writeBytes = async (key, data, writeOptions) => {
    if ((options.while?.() ?? true) && refused(key)) {
      const cause = Object.assign(new Error(`${code}: no space left on device, write`), { code });
      throw storageFailure('write', { url: store.url, key }, cause);
    }
    return store.writeBytes!(key, data, writeOptions);
  };
  return refusing;
}
