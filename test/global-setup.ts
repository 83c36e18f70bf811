import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUN_ID_ENV, reapGroups } from '../devstack/registry.ts';
import { startTemporal, type TemporalServer } from '../devstack/temporal.ts';
import { PREBUILT_BUNDLE_ENV, TESTKIT_WORKFLOWS } from '../testkit/job-env.ts';
import { SHARED_TEMPORAL_ENV } from '../testkit/shared-temporal.ts';
import { writeWorkflowBundle } from '../workers/bundle.ts';

/**
 * One Temporal dev server for the job environments of every test file (each in a namespace of its own). Outside CI a
 * server that cannot start is left to the files that need Temporal to report; under CI=true it fails the run.
 */
async function startSharedTemporal(): Promise<TemporalServer | undefined> {
  try {
    // Never restarted, and gone with the run: no reason to wait for the disk on every commit (the machine's other
    // work may keep it busy).
    return await startTemporal({
      extraArgs: ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=off'],
    });
  } catch (error) {
    if (process.env['CI'] === 'true') throw error;
    console.warn(`[global-setup] no shared Temporal dev server: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
}

/**
 * Vitest global setup: tags every server the test processes start with this run's id (the forks inherit the
 * variables), starts the shared Temporal dev server, bundles the workflows once for every test's stack (a second or
 * two of CPU each), and after the whole run kills any server that is still alive and fails the run loudly.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const runId = randomUUID();
  process.env[RUN_ID_ENV] = runId;
  // Node's compiled-code cache for every test process and the CLI and worker processes they start (npm test sets it).
  process.env['NODE_COMPILE_CACHE'] ??= fileURLToPath(
    new URL('../node_modules/.cache/node-compile-cache', import.meta.url),
  );
  const bundleDir = await mkdtemp(join(tmpdir(), 'signal-kit-test-bundle-'));
  const workflowsPath = TESTKIT_WORKFLOWS;
  // SIGNAL_KIT_DEVSTACK_SHARED_TEMPORAL=off: every file starts its own server, as outside the suite.
  const sharing = process.env[SHARED_TEMPORAL_ENV] !== 'off';
  delete process.env[SHARED_TEMPORAL_ENV];
  const [temporal, { codePath }] = await Promise.all([
    sharing ? startSharedTemporal() : undefined,
    writeWorkflowBundle({ workflowsPath, outDir: bundleDir }),
  ]);
  if (temporal) process.env[SHARED_TEMPORAL_ENV] = temporal.address;
  process.env[PREBUILT_BUNDLE_ENV] = codePath;
  return async () => {
    await temporal?.stop();
    await rm(bundleDir, { recursive: true, force: true });
    const leftovers = await reapGroups({ runId });
    if (leftovers.length > 0) {
      const list = leftovers.map((r) => `${r.name} (pgid ${r.pgid}, started ${r.startedAt})`).join(', ');
      throw new Error(`server processes outlived the test run and were killed: ${list}`);
    }
  };
}
