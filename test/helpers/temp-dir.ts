import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A folder of the test file's own, made before its tests and removed after them; call the result for its path. */
export function useTempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error('useTempDir: the folder exists only while the tests run');
    return dir;
  };
}

/**
 * A folder of the test file's own (see `useTempDir`); call the result for a new path inside it at each call
 * (`<name>-0`, `<name>-1`, …, not created), so that each test or store starts from nothing.
 */
export function useFreshDirs(prefix: string, name: string): () => string {
  const root = useTempDir(prefix);
  let count = 0;
  return () => join(root(), `${name}-${count++}`);
}
