/**
 * A Parquet part is proved while it is copied to a private file; a part whose bytes are not its manifest's is refused
 * with PartChecksumError and nothing else: the copy's last write, still on its way when the refusal comes, must not
 * surface later as an unhandled stream error that kills the loader (seen in a fresh-clone suite: ERR_STREAM_DESTROYED).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PartChecksumError } from '../../../connectors/errors.ts';
import { FileStore } from '../../../connectors/storage/index.ts';
import { verifyPart } from '../../../loader/part-read.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('verifyPart copying a part that does not match its manifest', () => {
  it('rejects with PartChecksumError each time and leaves no stream error behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signal-kit-part-copy-'));
    dirs.push(dir);
    const store = new FileStore({ url: pathToFileURL(dir).href, dir });
    const other = createHash('sha256').update('not these bytes').digest('hex');
    // A part of one chunk (as small Parquet parts are) and one of many.
    const parts = await Promise.all(
      [2_000, 4 * 1024 * 1024].map(async (size) => {
        const key = `part-${size}.parquet`;
        await writeFile(join(dir, key), Buffer.alloc(size, 7));
        return { key, lines: 1, bytes: size, sha256: other };
      }),
    );
    const late: unknown[] = [];
    const onLate = (error: unknown) => late.push(error);
    process.on('uncaughtException', onLate);
    try {
      for (let i = 0; i < 200; i++) {
        const part = parts[i % 2]!;
        await expect(verifyPart(store, part, join(dir, `copy-${i}`))).rejects.toBeInstanceOf(PartChecksumError);
      }
      // A late write's error surfaces on a later turn of the loop.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.off('uncaughtException', onLate);
    }
    expect(late).toEqual([]);
  });
});
