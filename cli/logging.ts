import { parseObservabilityConfig } from '../config/observability.ts';
import { installRuntime, type Telemetry } from '../workers/runtime.ts';

/** Logging for commands that host a worker next to something else (`dev`, `demo`): warnings and errors only unless asked for more. */
export function installWorkerLogging(secrets: readonly string[] = []): Telemetry {
  return installRuntime(parseObservabilityConfig(process.env, { logLevel: 'warn' }), secrets);
}
