import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MINIMUM_NODE, nodeTooOld } from '../../cli/node-version.ts';

/** A Node on this machine older than the kit's minimum: the system's (Debian's) Node, found on PATH or in /usr/bin. */
export function oldNode(): string {
  const candidates = new Set(['/usr/bin/node', '/bin/node']);
  try {
    for (const path of execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n')) {
      if (path.trim()) candidates.add(path.trim());
    }
  } catch {}
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (nodeTooOld(version)) return path;
  }
  throw new Error(
    `no Node older than ${MINIMUM_NODE} on this machine to run the check with (looked at ${[...candidates].join(', ')})`,
  );
}
