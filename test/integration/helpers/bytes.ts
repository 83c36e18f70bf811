import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

/**
 * Yields `size` deterministic, incompressible-looking bytes in 64 KiB chunks without holding them all,
 * reporting each chunk to `onChunk` (e.g. to hash what was sent).
 */
export function* pseudoRandomBytes(size: number, seed: number, onChunk?: (chunk: Buffer) => void): Generator<Buffer> {
  let state = seed >>> 0 || 1;
  for (let sent = 0; sent < size; ) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, size - sent));
    for (let i = 0; i < chunk.length; i++) {
      // xorshift32
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      chunk[i] = state & 0xff;
    }
    onChunk?.(chunk);
    sent += chunk.length;
    yield chunk;
  }
}

export async function sha256OfStream(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
