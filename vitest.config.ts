import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files known to run longest (seconds on a quiet 2-core machine, from a full run's JSON report). They start first,
 * longest first, so that the short files fill both workers at the end of the run instead of one long file running
 * alone after everything else is done. A fresh clone has no vitest cache, so the order cannot come from past runs.
 */
const HEAVY_FILES = new Map<string, number>([
  ['test/drills/worker-kill.test.ts', 110],
  ['test/e2e/cost-safety.test.ts', 59],
  ['test/promises/crash-drills.test.ts', 53],
  ['test/e2e/jobs-cli.test.ts', 31],
  ['test/integration/history-bound.test.ts', 35],
  ['test/integration/temporal-tls.test.ts', 28],
  ['test/integration/webhooks-delivery.test.ts', 27],
  ['test/bench/rate-limit-saturation.test.ts', 27],
  ['test/promises/rate-limit.test.ts', 25],
  ['test/drills/bad-input.test.ts', 25],
  ['test/integration/worker-observability.test.ts', 21],
  ['test/drills/temporal-restart.test.ts', 21],
  ['test/promises/bulk-enrichment.test.ts', 20],
  ['test/integration/worker-versioning.test.ts', 19],
]);

function declaredCost(spec: TestSpecification): number {
  const root = spec.project.config.root.replace(/\/$/, '');
  return HEAVY_FILES.get(spec.moduleId.slice(root.length + 1)) ?? 0;
}

/** The heavy files first, by declared cost; the rest in vitest's own order (longest last run first, or largest). */
class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const heavy = files.filter((spec) => declaredCost(spec) > 0).sort((a, b) => declaredCost(b) - declaredCost(a));
    const rest = await super.sort(files.filter((spec) => declaredCost(spec) === 0));
    return [...heavy, ...rest];
  }
}

export default defineConfig({
  test: {
    // The Temporal worker's native bridge misbehaves inside worker threads.
    pool: 'forks',
    // Four files at a time on two cores (vitest's default would be one): a file that starts servers keeps about a third
    // of a core busy (three such files: 27 CPU-seconds in 42 s; cost-safety alone: 19 in 71 s), the rest of its time
    // it waits on its servers, timeouts and child processes, so four of them fill two cores without crowding them.
    maxWorkers: 4,
    sequence: { sequencer: HeavyFirstSequencer },
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Tags the servers of this run and, after it, fails it if any is still alive.
    globalSetup: ['test/global-setup.ts'],
  },
});
