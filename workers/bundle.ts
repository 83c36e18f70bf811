/**
 * The prebuilt worker: the workflow bundle written once (at build or deploy time) and a worker that starts from it
 * instead of bundling at every start. The bundle's build id is the hash of its code, so two deploys of the same
 * workflow code share a Worker Deployment version and any change of workflow code makes a new one.
 */

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ConfigError } from '../connectors/errors.ts';

export const BUNDLE_FILE = 'workflow-bundle.js';
export const BUNDLE_INFO_FILE = 'workflow-bundle.json';

export interface BundleInfo {
  /** `sha256` of the bundle's code, first 16 hex digits. */
  buildId: string;
  /** The workflows module it was built from. */
  workflowsPath: string;
  createdAt: string;
}

export function buildIdOf(code: string): string {
  return createHash('sha256').update(code).digest('hex').slice(0, 16);
}

/** Bundles `workflowsPath` into `outDir/workflow-bundle.js` and records its build id next to it. */
export async function writeWorkflowBundle(options: {
  workflowsPath: string;
  outDir: string;
}): Promise<{ codePath: string; info: BundleInfo }> {
  const workflowsPath = resolve(options.workflowsPath);
  if (!existsSync(workflowsPath)) throw new ConfigError(`--workflows: no such file ${workflowsPath}`);
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  await mkdir(options.outDir, { recursive: true });
  const codePath = join(resolve(options.outDir), BUNDLE_FILE);
  const info: BundleInfo = { buildId: buildIdOf(code), workflowsPath, createdAt: new Date().toISOString() };
  await writeFile(codePath, code);
  await writeFile(join(resolve(options.outDir), BUNDLE_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`);
  return { codePath, info };
}

/** The build id of a bundle file: the hash of its code (the sidecar JSON is informative only). */
export async function bundleBuildId(codePath: string): Promise<string> {
  let code: string;
  try {
    code = await readFile(codePath, 'utf8');
  } catch (error) {
    throw new ConfigError(`SIGNAL_KIT_WORKFLOW_BUNDLE: cannot read ${codePath}: ${(error as Error).message}`);
  }
  return buildIdOf(code);
}
