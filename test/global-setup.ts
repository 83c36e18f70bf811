import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PREBUILT_BUNDLE_ENV } from '../devstack/job-env.ts';
import { RUN_ID_ENV, reapGroups } from '../devstack/registry.ts';
import { writeWorkflowBundle } from '../workers/bundle.ts';

/**
 * Vitest global setup: tags every server the test processes start with this run's id (the forks inherit the
 * variable), bundles the workflows once for every test's stack (a second or two of CPU each), and after the whole
 * run kills any server that is still alive and fails the run loudly.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const runId = randomUUID();
  process.env[RUN_ID_ENV] = runId;
  const bundleDir = await mkdtemp(join(tmpdir(), 'signal-kit-test-bundle-'));
  const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
  const { codePath } = await writeWorkflowBundle({ workflowsPath, outDir: bundleDir });
  process.env[PREBUILT_BUNDLE_ENV] = codePath;
  return async () => {
    await rm(bundleDir, { recursive: true, force: true });
    const leftovers = await reapGroups({ runId });
    if (leftovers.length > 0) {
      const list = leftovers.map((r) => `${r.name} (pgid ${r.pgid}, started ${r.startedAt})`).join(', ');
      throw new Error(`server processes outlived the test run and were killed: ${list}`);
    }
  };
}
