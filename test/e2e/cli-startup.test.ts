/**
 * First contact with the command: on a Node older than 22.12 every command prints one line saying so (no stack
 * trace from a dependency that cannot load there), and `--help` loads no dependency but the command framework (not
 * the Temporal client, not undici). Both run the compiled entry, as `npx signal-kit` would: built into a directory outside the repo, where
 * no `node_modules` can be found, so any eager import of a package fails the command.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINIMUM_NODE } from '../../cli/node-version.ts';
import { runProgram } from '../helpers/cli.ts';
import { oldNode } from '../helpers/old-node.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
let outDir: string;

function runEntry(node: string, args: string[]) {
  return runProgram(node, [join(outDir, 'cli/main.js'), ...args], { cwd: outDir }, 'minus-one');
}

describe('signal-kit on first contact', () => {
  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'signal-kit-entry-'));
    await run(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-p', join(repo, 'tsconfig.build.json'), '--outDir', outDir],
      {
        cwd: repo,
      },
    );
    // The one package the entry loads for --help: the command framework (dependency-free). Nothing else is there.
    await mkdir(join(outDir, 'node_modules'));
    await symlink(join(repo, 'node_modules/commander'), join(outDir, 'node_modules/commander'), 'dir');
  }, 180_000);
  afterAll(async () => {
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('on an old Node, --help and a job command print one line naming the minimum, exit 2', async () => {
    const node = oldNode();
    for (const args of [['--help'], ['enrich', '--input', 'x.csv', '--output', 'out']]) {
      const result = await runEntry(node, args);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`needs Node ${MINIMUM_NODE} or newer`);
    }
  });

  it('--help on a current Node loads only the command framework: it works where no other package can be found', async () => {
    const result = await runEntry(process.execPath, ['--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('signal-kit worker');
    expect((await runEntry(process.execPath, ['enrich', '--help'])).stdout).toContain('--max-credits');
    expect(result.stderr).toBe('');
    // The same directory fails as soon as a command needs the Temporal client: the check above is not vacuous.
    const job = await runEntry(process.execPath, ['status', 'some-job']);
    expect(job.code).toBe(1);
    expect(job.stderr).toMatch(/Cannot find package '(@temporalio\/[a-z]+|zod|undici)'/);
  });
});
