import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal worker's native bridge misbehaves inside worker threads.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Tags the servers of this run and, after it, fails it if any is still alive.
    globalSetup: ['test/global-setup.ts'],
  },
});
