/** A job environment and a scratch directory for the tests of one describe block. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type JobEnv, startJobEnv } from '../../testkit/job-env.ts';

export interface JobEnvWithDir {
  env: JobEnv;
  /** A fresh temporary directory (`signal-kit-<label>-…`). */
  dir: string;
}

/**
 * For the enclosing describe block: starts a job environment with `options` and makes the directory before the
 * block's own beforeAll hooks; stops and removes both after its own afterAll hooks (so its workers and servers stop
 * first). The returned object is filled in by the time those hooks run.
 */
export function useJobEnv(label: string, options: Parameters<typeof startJobEnv>[0]): JobEnvWithDir {
  const job = {} as JobEnvWithDir;
  beforeAll(async () => {
    job.env = await startJobEnv(options);
    job.dir = await mkdtemp(join(tmpdir(), `signal-kit-${label}-`));
  });
  afterAll(async () => {
    await job.env?.stop();
    if (job.dir) await rm(job.dir, { recursive: true, force: true });
  });
  return job;
}
