import { PartSpool } from '../../activities/paid/spool.ts';
import { openStore } from '../../config/storage.ts';
import { storageFailure } from '../../connectors/storage/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { tempDir } from '../../testkit/drill-input.ts';
import type { JobEnv } from '../../testkit/job-env.ts';
import { startWorker, type WorkerHandle } from '../../workers/worker.ts';

/** By default a job's outputs are refused and its `work/` (batch files, call markers) is still written. */
const OUTPUTS = (key: string) => !key.includes('/work/');

/**
 * `store` as an output that refuses some writes for good: each write of a key `refused` picks fails with Node's
 * error `code` (ENOSPC: a full disk) through the store's own error mapping, as a full or denied output fails.
 * `while` turns the refusal on and off (the disk freed between two runs); always on when absent.
 */
export function refusingStore(
  store: Store,
  options: {
    refused?: (key: string) => boolean;
    code?: string;
    while?: () => boolean;
    /** Told each write it refuses (the test counts attempts: retrying a full disk is a bug). */
    onRefused?: (key: string) => void;
  } = {},
): Store {
  const { refused = OUTPUTS, code = 'ENOSPC' } = options;
  const refusing = Object.create(store) as Store;
  refusing.writeBytes = async (key, data, writeOptions) => {
    if ((options.while?.() ?? true) && refused(key)) {
      options.onRefused?.(key);
      const cause = Object.assign(new Error(`${code}: no space left on device, write`), { code });
      throw storageFailure('write', { url: store.url, key }, cause);
    }
    return store.writeBytes!(key, data, writeOptions);
  };
  return refusing;
}

/**
 * A worker on `env`'s queues whose outputs refuse the keys `refused` picks while `refusing()` says so (a full disk),
 * with a spool of its own (a temporary directory named after `name`).
 */
export async function startRefusingWorker(
  env: JobEnv,
  name: string,
  refused: (key: string) => boolean,
  refusing: () => boolean,
): Promise<WorkerHandle> {
  const spool = new PartSpool(await tempDir(name));
  return startWorker({
    config: env.config(),
    workflowBundle: env.bundle,
    deps: { openStore: (url) => refusingStore(openStore(url), { refused, while: refusing }), spool },
  });
}
