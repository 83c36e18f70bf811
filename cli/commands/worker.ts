import { parseWorkerConfig } from '../../workers/config.ts';
import { startWorker } from '../../workers/worker.ts';
import { installWorkerLogging } from '../logging.ts';

/** `worker`: hosts the workflows and activities until SIGINT or SIGTERM, then drains and exits 0. */
export async function runWorkerCommand(_argv: string[] = []): Promise<number> {
  installWorkerLogging();
  const config = parseWorkerConfig();
  const bundlePath = process.env['SIGNAL_KIT_WORKFLOW_BUNDLE'];
  const worker = await startWorker({ config, ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : {}) });
  const stop = () => void worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.error(
    `signal-kit worker: pid ${process.pid}, Temporal ${config.address}/${config.namespace}, queues ${config.taskQueue} + ${config.apiTaskQueue} (${config.ratePerMinute} API requests/min)`,
  );
  await worker.done;
  return 0;
}
