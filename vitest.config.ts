import { globSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each test file took in a full run (files of 5 s or more; `node scripts/record-test-costs.ts` rewrites it from
 * the JSON report `npm test` leaves in .tmp/). They start first, longest first, so that the short files fill the
 * workers at the end of the run instead of one long file running alone after everything else is done. A fresh clone
 * has no vitest cache, so the order cannot come from past runs.
 */
const FILE_COSTS = new Map<string, number>(
  Object.entries(JSON.parse(readFileSync(new URL('./test/file-costs.json', import.meta.url), 'utf8')) as object),
);

function declaredCost(spec: TestSpecification): number {
  const root = spec.project.config.root.replace(/\/$/, '');
  return FILE_COSTS.get(spec.moduleId.slice(root.length + 1)) ?? 0;
}

/** The heavy files first, by declared cost; the rest in vitest's own order (longest last run first, or largest). */
class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const heavy = files.filter((spec) => declaredCost(spec) > 0).sort((a, b) => declaredCost(b) - declaredCost(a));
    const rest = await super.sort(files.filter((spec) => declaredCost(spec) === 0));
    return [...heavy, ...rest];
  }
}

/**
 * Unit test files that change what other files in the same process would see: a module mocked for the whole file,
 * a prototype patched, fake timers. They get a fresh process each, like every file that starts servers.
 */
const NEEDING_ISOLATION = [
  'test/unit/storage-file-crash.test.ts',
  'test/unit/webhooks/safe-dispatcher.test.ts',
  'test/unit/workers/activity-failures.test.ts',
];

/**
 * The other unit test files and the contract tests (the client against the in-process sandbox) run one after another
 * in a few long-lived processes (vitest's isolate: false): each would otherwise spend a second or more starting a
 * process and importing the same modules again (the 476 unit tests: 38 CPU-seconds isolated, 22 shared).
 */
const SHARED_PROCESS = globSync(['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts'], {
  cwd: import.meta.dirname,
}).filter((file) => !NEEDING_ISOLATION.includes(file));

export default defineConfig({
  test: {
    // The Temporal worker's native bridge misbehaves inside worker threads.
    pool: 'forks',
    // Four files at a time on two cores (vitest's default would be one): a file that starts servers keeps about a third
    // of a core busy (three such files: 27 CPU-seconds in 42 s; cost-safety alone: 19 in 71 s), the rest of its time
    // it waits on its servers, timeouts and child processes, so four of them fill two cores without crowding them.
    maxWorkers: 4,
    sequence: { sequencer: HeavyFirstSequencer },
    projects: [
      { extends: true, test: { name: 'shared-process', include: SHARED_PROCESS, isolate: false } },
      { extends: true, test: { name: 'own-process', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
    ],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Tags the servers of this run and, after it, fails it if any is still alive.
    globalSetup: ['test/global-setup.ts'],
  },
});
