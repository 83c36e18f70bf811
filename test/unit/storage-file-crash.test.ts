/**
 * What a crash leaves in a file:// output: temporary files of writes that never finished are removed once stale,
 * and a published object's rename is made durable with a directory fsync.
 */
import type * as FsPromises from 'node:fs/promises';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileStore, STALE_TEMP_MS } from '../../connectors/storage/file.ts';

const syncedDirectories: string[] = [];
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof FsPromises>();
  return {
    ...original,
    open: async (...args: Parameters<typeof original.open>) => {
      const handle = await original.open(...args);
      const path = String(args[0]);
      if ((await handle.stat()).isDirectory()) {
        const sync = handle.sync.bind(handle);
        handle.sync = async () => {
          await sync();
          syncedDirectories.push(path);
        };
      }
      return handle;
    },
  };
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signal-kit-file-crash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const store = () => new FileStore({ url: pathToFileURL(dir).href, dir });

describe('file:// store after a crash', () => {
  it('fsyncs the directory after renaming an object into place', async () => {
    syncedDirectories.length = 0;
    await store().writeText('job/parts/part-00000.jsonl', '{"a":1}\n', { metadata: { k: 'v' } });
    expect(syncedDirectories).toContain(join(dir, 'job', 'parts'));
  });

  it('removes temporary files nobody wrote to for an hour when listing, and keeps fresh ones', async () => {
    const parts = join(dir, 'crashed', 'parts');
    await mkdir(parts, { recursive: true });
    const stale = join(parts, '.part-00001.jsonl.gz.sk-tmp-0123456789ab');
    const fresh = join(parts, '.part-00002.jsonl.gz.sk-tmp-ba9876543210');
    await writeFile(stale, 'half a part');
    await writeFile(fresh, 'a write in progress');
    const old = new Date(Date.now() - STALE_TEMP_MS - 60_000);
    await utimes(stale, old, old);
    await store().writeText('crashed/parts/part-00000.jsonl', '{"a":1}\n');

    const listed = [];
    for await (const info of store().list('crashed/parts/')) listed.push(info.key);
    expect(listed).toEqual(['crashed/parts/part-00000.jsonl']);
    const left = await readdir(parts);
    expect(left).not.toContain('.part-00001.jsonl.gz.sk-tmp-0123456789ab');
    expect(left).toContain('.part-00002.jsonl.gz.sk-tmp-ba9876543210');
  });
});
