#!/usr/bin/env node
// Only dependency-free modules are imported up front: the Node version check must work without loading any package
// (commander, undici and the Temporal SDK do not even load on an old Node). The command list is in program.ts; each
// command's module is imported when it runs, so `--help` loads commander and nothing else.
import { nodeTooOld } from './node-version.ts';
import { readPackageVersion } from './package-version.ts';

async function main(argv: string[]): Promise<number> {
  const tooOld = nodeTooOld(process.versions.node);
  if (tooOld) {
    console.error(tooOld);
    return 2;
  }
  const { runCli } = await import('./program.ts');
  return runCli(argv, readPackageVersion());
}

process.exitCode = await main(process.argv.slice(2));
