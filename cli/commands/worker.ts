import { parseDeploymentConfig } from '../../config/deployment.ts';
import { parseObservabilityConfig } from '../../config/observability.ts';
import { ownSpoolDir } from '../../config/spool.ts';
import { parseWebhookDeliveryConfig } from '../../config/webhooks.ts';
import { parseWorkerConfig, parseWorkerHeapConfig, type WorkerConfig } from '../../config/worker.ts';
import { ConfigError } from '../../connectors/errors.ts';
import type { WebhookDeliveryConfig } from '../../connectors/webhooks/destinations.ts';
import { bundleBuildId } from '../../workers/bundle.ts';
import { crmSecretsOf } from '../../workers/crm-writers.ts';
import { startHealthServer } from '../../workers/health.ts';
import { applyWorkerHeapConfig } from '../../workers/heap.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { shutdownGraceMs, startWorker } from '../../workers/worker.ts';
import { positiveInt } from '../args.ts';

/** Every value the logger must cut out of its lines. */
function secretsOf(config: WorkerConfig, webhooks: WebhookDeliveryConfig): string[] {
  const secrets = [config.apiKey, config.temporalApiKey ?? ''];
  for (const destination of webhooks.destinations) {
    if (!('secret' in destination)) continue;
    for (const secret of [destination.secret].flat()) secrets.push(secret, secret.replace(/^whsec_/, ''));
  }
  for (const key of config.payloadKeys ?? []) secrets.push(key.key.toString('base64'));
  return [...secrets, ...crmSecretsOf()];
}

/** `worker`'s flags, as commander hands them over (declared in cli/program.ts). */
export interface WorkerFlags {
  healthPort?: string;
  metricsPort?: string;
  makeCurrent?: boolean;
}

/**
 * `worker [--health-port N] [--metrics-port N]`: hosts the workflows and activities until SIGINT or SIGTERM, then
 * drains (see `shutdownGraceMs`) and exits 0. Logs are JSON lines on stderr (readable lines on a terminal).
 */
export async function runWorkerCommand(flags: WorkerFlags = {}): Promise<number> {
  const values = {
    'health-port': flags.healthPort,
    'metrics-port': flags.metricsPort,
    'make-current': flags.makeCurrent === true,
  };
  const env = {
    ...process.env,
    ...(values['health-port'] !== undefined ? { SIGNAL_KIT_HEALTH_PORT: values['health-port'] } : {}),
    ...(values['metrics-port'] !== undefined ? { SIGNAL_KIT_METRICS_PORT: values['metrics-port'] } : {}),
  };
  if (values['health-port'] !== undefined) positiveInt('health-port', values['health-port']);
  if (values['metrics-port'] !== undefined) positiveInt('metrics-port', values['metrics-port']);
  const observability = parseObservabilityConfig(env);
  const config = parseWorkerConfig(env);
  const heap = parseWorkerHeapConfig(env);
  const webhooks = parseWebhookDeliveryConfig(env);
  const deployment = parseDeploymentConfig(env);
  if (values['make-current'] && !deployment.deploymentName) {
    throw new ConfigError('--make-current: set SIGNAL_KIT_DEPLOYMENT_NAME to version this worker');
  }
  // Before the runtime starts (it would keep the process alive after the error): a spool others can reach is refused.
  if (config.spoolDir) await ownSpoolDir(config.spoolDir);
  applyWorkerHeapConfig(heap);
  const { logger, metrics, metricsUrl } = installRuntime(observability, secretsOf(config, webhooks));
  // Start and stop lines are written at any level: scripts and operators wait for them.
  const lifecycle = logger.child({}, { level: 'info' });
  const versioning = deployment.deploymentName
    ? {
        deploymentName: deployment.deploymentName,
        buildId: deployment.buildId ?? (await bundleBuildId(deployment.bundlePath!)),
        behavior: deployment.behavior,
      }
    : undefined;
  const worker = await startWorker({
    config,
    webhooks,
    metrics,
    ...(deployment.bundlePath ? { workflowBundle: { codePath: deployment.bundlePath } } : {}),
    ...(versioning ? { versioning } : {}),
  });
  if (values['make-current']) {
    await worker.makeCurrentVersion();
    lifecycle.info({ version: versioning }, 'signal-kit worker: this version is now current');
  }
  const health =
    observability.healthPort !== undefined
      ? await startHealthServer({ host: observability.host, port: observability.healthPort, checks: worker.checks })
      : undefined;
  const stop = (signal: NodeJS.Signals) => {
    lifecycle.info({ signal, graceMs: shutdownGraceMs(config) }, 'signal-kit worker: draining');
    void worker.shutdown();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  lifecycle.info(
    {
      temporal: `${config.address}/${config.namespace}`,
      queues: [config.taskQueue, config.apiTaskQueue],
      apiRatePerMinute: config.ratePerMinute,
      ...(versioning ? { version: `${versioning.deploymentName}.${versioning.buildId}` } : {}),
      workflows: deployment.bundlePath ?? 'bundled at start',
      ...(health ? { health: health.url } : {}),
      ...(metricsUrl ? { metrics: metricsUrl } : {}),
    },
    `signal-kit worker: pid ${process.pid}, Temporal ${config.address}/${config.namespace}, queues ${config.taskQueue} + ${config.apiTaskQueue} (${config.ratePerMinute} API requests/min)`,
  );
  await worker.done;
  await health?.close();
  lifecycle.info('signal-kit worker: stopped');
  return 0;
}
