/**
 * Logs, metrics and health endpoints of a process that hosts a worker, from `SIGNAL_KIT_*` variables (flags of
 * `signal-kit worker` override the ports). Parsed once, before the Temporal runtime is installed.
 */

import { z } from 'zod';
import { ConfigError } from '../connectors/errors.ts';

const port = z.coerce.number().int().min(0).max(65_535);
const level = z
  .string()
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(['trace', 'debug', 'info', 'warn', 'error']));

const schema = z.object({
  SIGNAL_KIT_LOG_LEVEL: level.optional(),
  /** `json` (one object per line) or `pretty` (for a person); default: pretty when stderr is a terminal. */
  SIGNAL_KIT_LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Where the metrics and health endpoints listen; 0.0.0.0 in a container that is scraped from outside. */
  SIGNAL_KIT_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
  SIGNAL_KIT_METRICS_PORT: port.optional(),
  SIGNAL_KIT_HEALTH_PORT: port.optional(),
  /** An OpenTelemetry collector for metrics: grpc://host:4317, or http://host:4318/v1/metrics with _HTTP=true. */
  SIGNAL_KIT_OTEL_METRICS_URL: z.url().optional(),
  SIGNAL_KIT_OTEL_METRICS_HTTP: z.enum(['true', 'false']).default('false'),
});

export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface ObservabilityConfig {
  logLevel: LogLevelName;
  logFormat: 'json' | 'pretty';
  host: string;
  /** Prometheus `/metrics` port; undefined = no Prometheus endpoint. */
  metricsPort: number | undefined;
  healthPort: number | undefined;
  otel: { url: string; http: boolean } | undefined;
}

type Env = Record<string, string | undefined>;

export function parseObservabilityConfig(
  env: Env = process.env,
  defaults: { logLevel?: LogLevelName; terminal?: boolean } = {},
): ObservabilityConfig {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const c = result.data;
  if (c.SIGNAL_KIT_METRICS_PORT !== undefined && c.SIGNAL_KIT_OTEL_METRICS_URL !== undefined) {
    throw new ConfigError('SIGNAL_KIT_METRICS_PORT and SIGNAL_KIT_OTEL_METRICS_URL: choose one metrics exporter');
  }
  return {
    logLevel: c.SIGNAL_KIT_LOG_LEVEL ?? defaults.logLevel ?? 'info',
    logFormat: c.SIGNAL_KIT_LOG_FORMAT ?? ((defaults.terminal ?? process.stderr.isTTY) ? 'pretty' : 'json'),
    host: c.SIGNAL_KIT_HTTP_HOST,
    metricsPort: c.SIGNAL_KIT_METRICS_PORT,
    healthPort: c.SIGNAL_KIT_HEALTH_PORT,
    otel: c.SIGNAL_KIT_OTEL_METRICS_URL
      ? { url: c.SIGNAL_KIT_OTEL_METRICS_URL, http: c.SIGNAL_KIT_OTEL_METRICS_HTTP === 'true' }
      : undefined,
  };
}
