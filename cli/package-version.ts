import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in signal-kit's package.json, found by walking up from this file: it sits one folder up in a clone
 * (cli/) and two in the published package (dist/cli/). `unknown` when the entry runs outside any package.
 */
export function readPackageVersion(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'signal-kit' && typeof pkg.version === 'string') return pkg.version;
    } catch {}
    if (dirname(dir) === dir) return 'unknown';
  }
}
