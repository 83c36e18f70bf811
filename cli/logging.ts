import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';

/** Temporal's own logging for processes that host a worker: warnings and errors only unless asked for more. */
export function installWorkerLogging(): void {
  const level = (process.env['SIGNAL_KIT_LOG_LEVEL']?.toUpperCase() ?? 'WARN') as LogLevel;
  Runtime.install({ logger: new DefaultLogger(level) });
}
