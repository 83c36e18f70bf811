/**
 * How a worker is deployed: from a prebuilt workflow bundle, and with Worker Deployment versioning.
 *   SIGNAL_KIT_WORKFLOW_BUNDLE       the bundle `signal-kit build-workflows` wrote (else: bundle at start)
 *   SIGNAL_KIT_DEPLOYMENT_NAME       turns versioning on: the Worker Deployment this worker belongs to
 *   SIGNAL_KIT_BUILD_ID              its version; default: the bundle's hash (changed workflow code = new version)
 *   SIGNAL_KIT_VERSIONING_BEHAVIOR   pinned (default: a workflow finishes on the version that started it) or
 *                                    auto-upgrade (moves to the current version at its next task)
 */

import { z } from 'zod';
import { ConfigError } from '../connectors/errors.ts';

const schema = z.object({
  SIGNAL_KIT_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  SIGNAL_KIT_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be letters, digits, _ or - (no dots)')
    .optional(),
  SIGNAL_KIT_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be letters, digits, _ . or -')
    .optional(),
  SIGNAL_KIT_VERSIONING_BEHAVIOR: z.enum(['pinned', 'auto-upgrade']).default('pinned'),
});

export interface DeploymentConfig {
  bundlePath: string | undefined;
  /** Undefined: versioning off (any worker of the task queue runs any workflow). */
  deploymentName: string | undefined;
  buildId: string | undefined;
  behavior: 'PINNED' | 'AUTO_UPGRADE';
}

export function parseDeploymentConfig(env: Record<string, string | undefined> = process.env): DeploymentConfig {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const c = result.data;
  if (c.SIGNAL_KIT_DEPLOYMENT_NAME && !c.SIGNAL_KIT_BUILD_ID && !c.SIGNAL_KIT_WORKFLOW_BUNDLE) {
    throw new ConfigError(
      'SIGNAL_KIT_DEPLOYMENT_NAME: a versioned worker needs SIGNAL_KIT_WORKFLOW_BUNDLE (its hash is the build id) or SIGNAL_KIT_BUILD_ID',
    );
  }
  return {
    bundlePath: c.SIGNAL_KIT_WORKFLOW_BUNDLE,
    deploymentName: c.SIGNAL_KIT_DEPLOYMENT_NAME,
    buildId: c.SIGNAL_KIT_BUILD_ID,
    behavior: c.SIGNAL_KIT_VERSIONING_BEHAVIOR === 'auto-upgrade' ? 'AUTO_UPGRADE' : 'PINNED',
  };
}
