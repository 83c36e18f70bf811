import { randomUUID } from 'node:crypto';
import { RUN_ID_ENV, reapGroups } from '../devstack/registry.ts';

/**
 * Vitest global setup: tags every server the test processes start with this run's id (the forks inherit the
 * variable), and after the whole run kills any that is still alive and fails the run loudly.
 */
export default function setup(): () => Promise<void> {
  const runId = randomUUID();
  process.env[RUN_ID_ENV] = runId;
  return async () => {
    const leftovers = await reapGroups({ runId });
    if (leftovers.length > 0) {
      const list = leftovers.map((r) => `${r.name} (pgid ${r.pgid}, started ${r.startedAt})`).join(', ');
      throw new Error(`server processes outlived the test run and were killed: ${list}`);
    }
  };
}
