/**
 * A part's bytes read as a stream and checked against its manifest, never whole in memory: its size is checked
 * before a byte is read and reading stops at the manifest's size plus one byte; a first pass proves the sha256
 * before anything is decoded, and the pass that is decoded checks it again as it ends, so a part swapped between
 * the two passes is refused (its table's COPY then fails and the load rolls back).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { PartChecksumError } from '../connectors/errors.ts';
import type { Store } from '../connectors/storage/index.ts';
import type { LoadPart } from './manifest.ts';

/**
 * The part's bytes as they are read, refused (naming the part) unless they are the manifest's: past its size at once,
 * a size or sha256 that differs as the stream ends. Each chunk is handed on as it is read.
 */
export async function* checkedPartChunks(store: Store, part: LoadPart): AsyncGenerator<Buffer> {
  const refuse = (differs: 'size' | 'sha256') =>
    new PartChecksumError({ url: store.url, key: part.key, expected: part.sha256, differs });
  const info = await store.stat(part.key);
  if (info !== undefined && info.size !== part.bytes) throw refuse('size');
  const hash = createHash('sha256');
  let size = 0;
  const stream = await store.openRead(part.key);
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > part.bytes) throw refuse('size');
      hash.update(chunk as Buffer);
      yield chunk as Buffer;
    }
  } finally {
    // A read stopped early (refused, or its reader gone) must not hold the file or connection open.
    stream.destroy();
  }
  if (size !== part.bytes) throw refuse('size');
  if (hash.digest('hex') !== part.sha256) throw refuse('sha256');
}

/**
 * Reads the part through once, proving its size and sha256 before anything of it is decoded; with `copyTo`, its
 * bytes are written there as they are read (a Parquet part is decoded from that private copy, which needs reading
 * at random, so that what is decoded is exactly what was proved).
 */
export async function verifyPart(store: Store, part: LoadPart, copyTo?: string): Promise<void> {
  const out = copyTo === undefined ? undefined : createWriteStream(copyTo, { flags: 'wx', mode: 0o600 });
  try {
    for await (const chunk of checkedPartChunks(store, part)) {
      if (out && !out.write(chunk)) await once(out, 'drain');
    }
  } catch (error) {
    out?.destroy();
    throw error;
  }
  if (out) {
    out.end();
    await finished(out);
  }
}
