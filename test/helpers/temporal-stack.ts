import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogLevel,
  Runtime,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { type DevStackOptions, type DevStackWith, startDevStack } from '../../devstack/index.ts';

/**
 * Installs the Temporal runtime's logger (once per test file), then starts the dev stack and bundles the workflows
 * side by side, since both take seconds.
 */
export async function startStackAndBundle<const O extends DevStackOptions>(
  services: O,
  workflowsPath: string,
  runtimeLogLevel: LogLevel = 'ERROR',
): Promise<[DevStackWith<O>, WorkflowBundleWithSourceMap]> {
  Runtime.install({ logger: new DefaultLogger(runtimeLogLevel) });
  return Promise.all([
    startDevStack(services),
    bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }),
  ]);
}
