import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sha256Thread } from '../../../activities/jobs/sha256-thread.ts';

async function threadDigest(chunks: Buffer[]): Promise<string> {
  const thread = new Sha256Thread();
  try {
    for (const chunk of chunks) await thread.update(chunk);
    return await thread.digest();
  } finally {
    await thread.close();
  }
}

const expected = (chunks: Buffer[]) => createHash('sha256').update(Buffer.concat(chunks)).digest('hex');

describe('Sha256Thread', () => {
  it('gives the digest of every byte fed, whatever the chunk sizes (more than its blocks hold at once)', async () => {
    const sizes = [1, 7, 65_536, 1024 * 1024, 1024 * 1024 + 3, 3 * 1024 * 1024, 0, 5, 6 * 1024 * 1024 + 11];
    const chunks = sizes.map((size) => randomBytes(size));
    expect(await threadDigest(chunks)).toBe(expected(chunks));
  });

  it('gives the digest of nothing when fed nothing', async () => {
    expect(await threadDigest([])).toBe(expected([]));
  });
});
