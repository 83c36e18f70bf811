/**
 * A part's bytes read as a stream and checked against its manifest, never whole in memory: its size is checked
 * before a byte is read and reading stops at the manifest's size plus one byte; a first pass proves the sha256
 * before anything is decoded, and the pass that is decoded checks it again as it ends, so a part swapped between
 * the two passes is refused (its table's COPY then fails and the load rolls back). A `file://` part that is a symbolic
 * link is refused before it is opened, and again after it is read.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ManifestError, PartChecksumError } from '../connectors/errors.ts';
import type { Store } from '../connectors/storage/index.ts';
import type { LoadPart } from './manifest.ts';

/**
 * A `file://` part is read only as a plain file of its output's own folder: a part that is a symbolic link, or lies
 * under a folder of the output that is one, is refused by its key (never naming where the link leads), whatever its
 * size and sha256; otherwise a planted link would make the load confirm a guessed size and hash of any file the
 * loader can read, and load it. The output's own folder may be a link (the user's choice of where it lies).
 */
export async function refuseLinkedPart(store: Store, part: LoadPart): Promise<void> {
  if (!store.url.startsWith('file:')) return;
  let path = fileURLToPath(store.url);
  for (const segment of part.key.split('/')) {
    path = join(path, segment);
    const info = await lstat(path).catch(() => undefined);
    // A missing part: reading it says so.
    if (info === undefined) return;
    if (info.isSymbolicLink()) {
      throw new ManifestError(
        store.url,
        `part ${part.key}: a symbolic link, or under one; a part is read only as a plain file of its output's folder`,
      );
    }
  }
}

/**
 * The part's bytes as they are read, refused (naming the part) unless they are the manifest's: past its size at once,
 * a size or sha256 that differs as the stream ends. Each chunk is handed on as it is read.
 */
export async function* checkedPartChunks(store: Store, part: LoadPart): AsyncGenerator<Buffer> {
  const refuse = (differs: 'size' | 'sha256') =>
    new PartChecksumError({ url: store.url, key: part.key, expected: part.sha256, differs });
  await refuseLinkedPart(store, part);
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
  // A link put in place while the part was read is refused too (its bytes are not handed on past this check's
  // failure: the converter and the destination fail the part, and the load rolls back).
  await refuseLinkedPart(store, part);
}

/**
 * Reads the part through once, proving its size and sha256 before anything of it is decoded; with `copyTo`, its
 * bytes are written there as they are read (a Parquet part is decoded from that private copy, which needs reading
 * at random, so that what is decoded is exactly what was proved).
 */
export async function verifyPart(store: Store, part: LoadPart, copyTo?: string): Promise<void> {
  if (copyTo === undefined) {
    for await (const _chunk of checkedPartChunks(store, part));
    return;
  }
  // pipeline owns the copy's lifecycle: a refused part destroys it only once its pending write has settled, so no
  // late write error is left without a listener (seen crashing the loader with ERR_STREAM_DESTROYED).
  await pipeline(checkedPartChunks(store, part), createWriteStream(copyTo, { flags: 'wx', mode: 0o600 }));
}
