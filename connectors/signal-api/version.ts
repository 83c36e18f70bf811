import { readFileSync } from 'node:fs';

/**
 * The kit's version from its package.json, found by walking up from this file (the same from the sources and from
 * `dist/`); `0.0.0` when it cannot be read (a bundler moved the code).
 */
function readVersion(): string {
  try {
    for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
      try {
        const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
          name?: string;
          version?: string;
        };
        if (pkg.name === 'signal-kit' && pkg.version) return pkg.version;
      } catch {
        // no package.json here: keep walking up
      }
    }
  } catch {
    // import.meta.url is not a file URL
  }
  return '0.0.0';
}

export const VERSION = readVersion();

/** The `User-Agent` every request carries unless the caller sets one: `signal-kit/<version>`. */
export const USER_AGENT = `signal-kit/${VERSION}`;
