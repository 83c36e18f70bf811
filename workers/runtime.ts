/**
 * The Temporal runtime of a process that hosts workers, installed once before any connection: its logger is the
 * kit's pino logger (native core logs forwarded to it too), and its metrics go to a Prometheus endpoint or an
 * OpenTelemetry collector. The kit's own counters are created on the same meter.
 */
import { type MetricsExporterConfig, Runtime } from '@temporalio/worker';
import type { ObservabilityConfig } from '../config/observability.ts';
import { createLogger, type Pino, temporalLogger } from './logger.ts';
import { createKitMetrics, type KitMetrics } from './metrics.ts';

export interface Telemetry {
  logger: Pino;
  metrics: KitMetrics;
  /** `http://host:port/metrics` when the Prometheus endpoint is on. */
  metricsUrl: string | undefined;
}

let installed: Telemetry | undefined;

function metricsExporter(config: ObservabilityConfig): MetricsExporterConfig | undefined {
  if (config.metricsPort !== undefined) {
    return { prometheus: { bindAddress: `${config.host}:${config.metricsPort}`, countersTotalSuffix: true } };
  }
  if (config.otel) {
    return { otel: { url: config.otel.url, http: config.otel.http, metricsExportInterval: '10s' } };
  }
  return undefined;
}

/**
 * Installs the runtime (first call only; later calls return the same telemetry). `secrets` are values the logger
 * must never write: the API key, webhook secrets, the Temporal API key.
 */
export function installRuntime(config: ObservabilityConfig, secrets: readonly string[] = []): Telemetry {
  if (installed) return installed;
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, secrets });
  const metrics = metricsExporter(config);
  const coreLevel = config.logLevel === 'trace' || config.logLevel === 'debug' ? 'DEBUG' : 'WARN';
  Runtime.install({
    logger: temporalLogger(logger),
    // The worker command stops its workers itself, in order (WorkerHandle.shutdown), instead of all at once.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { forward: {}, filter: { core: coreLevel, other: 'ERROR' } },
      ...(metrics ? { metrics } : {}),
    },
  });
  installed = {
    logger,
    metrics: createKitMetrics(Runtime.instance().metricMeter),
    metricsUrl: config.metricsPort !== undefined ? `http://${config.host}:${config.metricsPort}/metrics` : undefined,
  };
  return installed;
}
