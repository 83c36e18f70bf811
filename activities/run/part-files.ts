import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { storageFailure } from '../../connectors/storage/errors.ts';
import type { Store } from '../../connectors/storage/store.ts';
import { writeStream } from '../../connectors/storage/store-io.ts';
import type { TableName } from '../../contract/tables/columns.ts';
import type { OutputFormat } from '../tables/formats.ts';
import {
  type PartIdentity,
  type PartStatus,
  partMetadata,
  type StoredPart,
  storedPart,
  withStorageRetries,
} from './parts.ts';
import type { PartCounts } from './types.ts';

/**
 * Parts too large to hold in memory (a night's `rows.csv` of a million records, the sync's state): written to a
 * private local file first, then published from it through the same metadata and proofs as every part
 * (`parts.ts`: identity, size, sha256); read back the same way, proven while copied into a private file.
 */

/** A private folder (0700, files 0600 inside it) for a step's local files; `close` removes it whole. */
export interface Scratch {
  dir: string;
  path(name: string): string;
  close(): Promise<void>;
}

export async function openScratch(prefix = 'signal-kit-'): Promise<Scratch> {
  // mkdtemp creates the folder 0700: nobody else on the host reads what it holds.
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, path: (name) => join(dir, name), close: () => rm(dir, { recursive: true, force: true }) };
}

/** A local file being written (`stream`, honouring backpressure) and, once ended, its size and sha256. */
export interface LocalPartFile {
  path: string;
  stream: Writable;
  /** Ends the stream and waits for the file: its bytes and sha256. */
  finish(): Promise<{ bytes: number; sha256: string }>;
}

export function openLocalPart(path: string): LocalPartFile {
  const hash = createHash('sha256');
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const written = pipeline(counter, createWriteStream(path, { mode: 0o600 }));
  // A failure is seen by `finish`; until then it must not be an unhandled rejection.
  written.catch(() => undefined);
  return {
    path,
    stream: counter,
    finish: async () => {
      if (!counter.writableEnded) counter.end();
      await written;
      return { bytes, sha256: hash.digest('hex') };
    },
  };
}

/** Writes `text` to a local part, waiting when the file asks to (a million lines never pile up in memory). */
export async function writeLine(file: LocalPartFile, text: string): Promise<void> {
  if (!file.stream.write(text)) await new Promise<void>((resolve) => file.stream.once('drain', resolve));
}

/** What a part published from a file says of itself (as `writeTableParts` returns for an in-memory part). */
export interface FilePart {
  key: string;
  lines: number;
  bytes: number;
  sha256: string;
  table?: TableName;
  format?: OutputFormat;
}

export interface FilePartOptions {
  contentType: string;
  counts: PartCounts;
  identity: PartIdentity;
  status?: PartStatus;
  table?: TableName;
  format?: OutputFormat;
}

/**
 * Publishes a finished local file at `key` with a part's metadata (its size and sha256 as the file holds them),
 * atomically, trying again while the storage is unreachable, as `writePart` does for a part in memory.
 */
export async function publishFilePart(
  store: Store,
  key: string,
  file: { path: string; bytes: number; sha256: string },
  options: FilePartOptions,
): Promise<FilePart> {
  const { counts, identity, table, format } = options;
  const extra = {
    ...(table ? { 'signal-kit-table': table } : {}),
    ...(format ? { 'signal-kit-format': format } : {}),
  };
  const metadata = {
    ...partMetadata(file.sha256, counts, options.status ?? 'done', [], identity, file.bytes),
    ...extra,
  };
  await withStorageRetries(async () => {
    try {
      await writeStream(store, key, createReadStream(file.path), { contentType: options.contentType, metadata });
    } catch (error) {
      // A store's stream may fail with the file system's own error: classified as its one-step write is (a full
      // disk refuses for good, an outage passes), so a failed night on a full disk stops with what it wrote.
      throw storageFailure('write', { url: store.url, key }, error);
    }
  });
  return {
    key,
    lines: counts.lines,
    bytes: file.bytes,
    sha256: file.sha256,
    ...(table ? { table } : {}),
    ...(format ? { format } : {}),
  };
}

/** A part copied into a local file after proving itself, or why it did not. */
export type ProvenFile = { part: StoredPart; path: string } | { problem: string };

/**
 * Copies the part at `key` into the local file `path` while proving it: its metadata names `identity` and a size of
 * at most `maxBytes`; the copy stops one byte past the recorded size; its sha256 is the recorded one. The problem
 * names what failed, never the bytes. Absent: undefined.
 */
export async function copyProvenPart(
  store: Store,
  key: string,
  identity: PartIdentity,
  path: string,
  maxBytes: number,
): Promise<ProvenFile | undefined> {
  const info = await store.stat(key);
  if (!info) return undefined;
  const found = storedPart(info, identity);
  if (!found.part) return { problem: found.distrusted ?? 'it is not a part' };
  const part = found.part;
  if (part.bytes > maxBytes) return { problem: `it is ${part.bytes} bytes, more than the ${maxBytes} allowed` };
  const hash = createHash('sha256');
  let bytes = 0;
  let tooLong = false;
  const source: Readable = await store.openRead(key);
  const counted = async function* () {
    for await (const chunk of source) {
      const buffer = chunk as Buffer;
      bytes += buffer.length;
      if (bytes > part.bytes) {
        tooLong = true;
        source.destroy();
        return;
      }
      hash.update(buffer);
      yield buffer;
    }
  };
  await pipeline(counted, createWriteStream(path, { mode: 0o600 }));
  if (tooLong) return { problem: `it holds more than the ${part.bytes} bytes it recorded` };
  if (bytes !== part.bytes) return { problem: `it is ${bytes} bytes where ${part.bytes} were written` };
  if (hash.digest('hex') !== part.sha256) return { problem: 'its bytes do not have the sha256 it recorded' };
  return { part, path };
}

/** The size of a local file. */
export async function localSize(path: string): Promise<number> {
  return (await stat(path)).size;
}
