/**
 * What the drills that run their worker in this process share: a job environment whose worker calls the API
 * through a recording proxy (so a drill can see, hold and count every call), and a CRM-like input file.
 */
import { afterAll, beforeAll } from 'vitest';
import type { WorkerConfig } from '../../config/worker.ts';
import { type ApiProxy, startApiProxy } from '../../testkit/api-proxy.ts';
import { type DrillInput, writeDomainsCsv } from '../../testkit/drill-input.ts';
import type { JobEnv } from '../../testkit/job-env.ts';
import { useJobEnv } from '../helpers/job-env.ts';

export interface ProxiedDrillOptions {
  /** Names the temporary directory. */
  label: string;
  env: Parameters<typeof useJobEnv>[1];
  /** A bucket to create on the stack's object stores before the worker starts. */
  bucket?: string;
  /** The input, written as `crm.csv` (see writeDomainsCsv). */
  csv: { distinct: number; seed: number };
  /** The in-process worker's configuration, beyond its API URL (the proxy). */
  worker?: Partial<WorkerConfig>;
}

export interface ProxiedDrill {
  env: JobEnv;
  /** Between the worker and the sandbox: every call, its answer, and a way to hold answers. */
  proxy: ApiProxy;
  /** The temporary directory holding the input; outputs may go there too. */
  dir: string;
  input: DrillInput;
}

/**
 * For the enclosing describe block: starts the drill's environment (useJobEnv), proxy and in-process worker and
 * writes its input before the first test, and stops and removes all of it after the last. The returned object is
 * filled in by then.
 */
export function useProxiedDrill(options: ProxiedDrillOptions): ProxiedDrill {
  const jobEnv = useJobEnv(`drill-${options.label}`, options.env);
  const drill = {} as ProxiedDrill;
  let proxy: ApiProxy | undefined;
  beforeAll(async () => {
    const { env, dir } = jobEnv;
    if (options.bucket) await env.createBuckets(options.bucket);
    proxy = await startApiProxy(env.sandbox.url);
    await env.startWorker({ ...options.worker, url: proxy.url });
    const input = await writeDomainsCsv(dir, 'crm.csv', options.csv);
    Object.assign(drill, { env, proxy, dir, input });
  });
  afterAll(async () => {
    await proxy?.stop();
  });
  return drill;
}
