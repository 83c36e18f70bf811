/** Real `signal-kit worker` processes for a test file, killed after each test with the sandbox's faults cleared. */
import { afterEach } from 'vitest';
import { type ChildWorker, startChildWorker } from '../../testkit/cli-process.ts';
import type { JobEnv } from '../../testkit/job-env.ts';

/** Registers the clean-up after each test; returns what starts one more worker against the env. */
export function childWorkers(envOf: () => JobEnv): () => Promise<ChildWorker> {
  const workers: ChildWorker[] = [];
  afterEach(async () => {
    envOf().sandbox.setFaults({});
    await Promise.allSettled(workers.splice(0).map((w) => w.kill()));
  });
  return async () => {
    const w = await startChildWorker(envOf().childEnv());
    workers.push(w);
    return w;
  };
}
