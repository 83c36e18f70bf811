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

// Exit as soon as the command is done (once what it printed is written): a call the Temporal client still retries in
// a timer (a progress query left behind at the end of a --wait that rode out an outage) must not run against the
// closed connection and crash the process after its result was printed.
const code = await main(process.argv.slice(2));
const written = (stream: NodeJS.WriteStream) =>
  stream.writableLength === 0 ? Promise.resolve() : new Promise((resolve) => stream.once('drain', resolve));
await Promise.all([written(process.stdout), written(process.stderr)]);
process.exit(code);
