import { parseArgs } from 'node:util';
import { startSandbox } from '../../sandbox/index.ts';
import { startDevStack } from '../../test/stack/index.ts';
import { startWorker } from '../../workers/worker.ts';
import { DEFAULT_API_TASK_QUEUE, DEFAULT_TASK_QUEUE } from '../../workflows/constants.ts';
import { installWorkerLogging } from '../logging.ts';

/**
 * `dev`: a whole local environment for trying the CLI by hand: Temporal, S3, GCS, the sandbox and a worker. Prints
 * the variables to export in another shell, and stops everything on Ctrl-C.
 */
export async function runDevCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { 'no-worker': { type: 'boolean', default: false } } });
  installWorkerLogging();
  const stack = await startDevStack({ temporal: true, s3: true, gcs: true });
  const sandbox = await startSandbox({ seed: 1 });
  const env = { ...stack.env(), SIGNAL_API_URL: sandbox.url, SIGNAL_API_KEY: 'sk_test_1' };
  const worker = values['no-worker']
    ? undefined
    : await startWorker({
        config: {
          address: stack.temporal.address,
          namespace: stack.temporal.namespace,
          temporalApiKey: undefined,
          taskQueue: DEFAULT_TASK_QUEUE,
          apiTaskQueue: DEFAULT_API_TASK_QUEUE,
          url: sandbox.url,
          apiKey: 'sk_test_1',
          auth: 'x-api-key',
          ratePerMinute: 300,
          timeoutMs: 30_000,
        },
      });
  console.log('# signal-kit dev stack is up; in another shell:');
  for (const [name, value] of Object.entries(env)) console.log(`export ${name}=${JSON.stringify(value)}`);
  console.log('# Ctrl-C stops everything.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await worker?.shutdown();
  await sandbox.stop();
  await stack.stop();
  return 0;
}
