/**
 * The documented first command on a fresh clone, `./signal-kit --help`, on a machine whose own Node is too old (the
 * system's Node 20 first on PATH): the launcher finds the Node 24 the bootstrap keeps in the per-user cache, builds
 * dist/ because a clone has none, and runs the command; a second run starts at once, without building again.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, stat, symlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeTooOld } from '../../cli/node-version.ts';
import { runProgram } from '../helpers/cli.ts';
import { oldNode } from '../helpers/old-node.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
let clone: string;

/** The files a clone of this working tree would hold: tracked and new ones, not ignored ones (no dist/, no .tools/). */
async function copyWorkingTree(to: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && file !== 'node_modules' && existsSync(join(repo, file)));
  for (const file of files) {
    await mkdir(dirname(join(to, file)), { recursive: true });
    await cp(join(repo, file), join(to, file), { preserveTimestamps: true });
  }
}

function launch(args: string[], path: string) {
  const env = { HOME: process.env['HOME'] ?? '/root', PATH: path };
  return runProgram(join(clone, 'signal-kit'), args, { cwd: clone, env, timeout: 170_000 }, 'minus-one');
}

describe('./signal-kit on a fresh clone', () => {
  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'signal-kit-clone-'));
    await copyWorkingTree(clone);
    // Installing modules needs the npm registry, which tests may not reach: the clone shares this checkout's install.
    // A linked node_modules is never reinstalled by the launcher; the lock file is dated before it all the same.
    await symlink(join(repo, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const installed = await stat(join(repo, 'node_modules/.package-lock.json')).catch(() => undefined);
    if (installed) await utimes(join(clone, 'package-lock.json'), installed.atime, new Date(installed.mtimeMs - 1_000));
  }, 120_000);
  afterAll(async () => {
    if (clone) await rm(clone, { recursive: true, force: true });
  });

  it('runs --help with the system Node 20 first on PATH, building dist/ on first use only', async () => {
    const node = oldNode();
    const path = `${dirname(node)}:/usr/bin:/bin`;
    expect(
      nodeTooOld(
        execFileSync('node', ['-p', 'process.versions.node'], { env: { PATH: path } })
          .toString()
          .trim(),
      ),
    ).toBeDefined();
    expect(existsSync(join(clone, 'dist'))).toBe(false);

    const first = await launch(['--help'], path);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Usage: signal-kit/);
    expect(first.stdout).toContain('demo');
    expect(first.stderr).toContain('building dist/');
    expect(existsSync(join(clone, 'dist/cli/main.js'))).toBe(true);

    const second = await launch(['--version'], path);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(second.stderr).toBe('');
  }, 180_000);
});
