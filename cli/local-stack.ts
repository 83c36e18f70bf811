import { parseWorkerConfig, type WorkerConfig } from '../config/worker.ts';

/** The sandbox's demo key; it only exists in a local sandbox. */
export const SANDBOX_API_KEY = 'sk_test_1';

/** Worker configuration for a local stack: the dev server's Temporal and the sandbox, defaults for the rest. */
export function localWorkerConfig(temporal: { address: string; namespace: string }, sandboxUrl: string): WorkerConfig {
  return parseWorkerConfig({
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    SIGNAL_API_URL: sandboxUrl,
    SIGNAL_API_KEY: SANDBOX_API_KEY,
  });
}
