import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as fs from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { mapOrdered } from '../map-ordered.ts';
import { ObjectNotFoundError, storageFailure, WriteAbortedError } from './errors.ts';
import type { ObjectInfo, ObjectWriter, Store, WriteOptions } from './store.ts';
import { checkKey } from './url.ts';

// Files of ours that live next to the objects and are never listed: `.<name>.sk-tmp-<hex>` (a write in
// progress) and `.<name>.sk-meta.json` (the object's metadata).
const INTERNAL = /^\..*\.sk-(tmp-[0-9a-f]+|meta\.json)$/;
const TEMP = /^\..*\.sk-tmp-[0-9a-f]+$/;

/**
 * A temporary file nobody has written to for this long is the leftover of a crashed process (a live writer touches
 * it with every chunk): `list()` removes such files from the directories it walks.
 */
export const STALE_TEMP_MS = 60 * 60 * 1000;
const metaPathOf = (path: string) => join(dirname(path), `.${basename(path)}.sk-meta.json`);
const tempPathOf = (path: string) => join(dirname(path), `.${basename(path)}.sk-tmp-${randomBytes(6).toString('hex')}`);

const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/** A directory as a store: a write goes to a temporary file in the target's directory and is renamed into place. */
export class FileStore implements Store {
  readonly url: string;
  readonly dir: string;
  /** The clock that decides when a temporary file is stale (tests move it). */
  now: () => number = Date.now;

  constructor(location: { url: string; dir: string }) {
    this.url = location.url;
    this.dir = location.dir;
  }

  urlOf(key: string): string {
    return pathToFileURL(this.pathOf(key)).href;
  }

  private pathOf(key: string): string {
    return join(this.dir, ...checkKey(key, this.url).split('/'));
  }

  async openRead(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    let handle: FileHandle;
    try {
      handle = await fs.open(path, 'r');
    } catch (err) {
      if (isMissing(err)) throw new ObjectNotFoundError({ url: this.url, key, cause: err });
      throw storageFailure('open for reading', { url: this.url, key }, err);
    }
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      throw new ObjectNotFoundError({ url: this.url, key });
    }
    return handle.createReadStream();
  }

  openWrite(key: string, options: WriteOptions = {}): ObjectWriter {
    const path = this.pathOf(key);
    const details = { url: this.url, key };
    const sink = new TempFileSink(path);
    // Failures reach the caller through done() (and pipeline()); an unobserved 'error' must not crash the process.
    sink.on('error', () => {});
    let aborted: WriteAbortedError | undefined;
    let published: Promise<ObjectInfo> | undefined;
    let renaming = false;

    const publish = async (): Promise<ObjectInfo> => {
      try {
        await finished(sink);
      } catch (err) {
        await sink.discard();
        throw aborted ?? storageFailure('write', details, err);
      }
      if (aborted) throw aborted;
      renaming = true;
      try {
        await publishTemp(sink.tempPath, path, options.metadata);
      } catch (err) {
        await sink.discard();
        throw storageFailure('publish', details, err);
      }
      return { key, size: sink.bytes, metadata: { ...options.metadata } };
    };

    return {
      stream: sink,
      done: () => {
        published ??= publish();
        return published;
      },
      abort: async (reason?: unknown) => {
        if (renaming) {
          // Too late to take back: the data is complete and being renamed into place.
          await published?.catch(() => {});
          return;
        }
        aborted ??= new WriteAbortedError({ ...details, cause: reason });
        if (!sink.destroyed) sink.destroy(aborted);
        await sink.discard();
      },
    };
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    const path = this.pathOf(key);
    try {
      const info = await fs.stat(path);
      if (!info.isFile()) return undefined;
      return { key, size: info.size, metadata: await readMetadata(path) };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw storageFailure('stat', { url: this.url, key }, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const keys: string[] = [];
    const slash = prefix.lastIndexOf('/');
    const startRel = slash === -1 ? '' : prefix.slice(0, slash);
    const walk = async (rel: string): Promise<void> => {
      let entries: Dirent[];
      const dirPath = rel ? join(this.dir, ...rel.split('/')) : this.dir;
      try {
        entries = await fs.readdir(dirPath, { withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return;
        throw storageFailure('list', { url: this.url, key: prefix }, err);
      }
      for (const entry of entries) {
        if (TEMP.test(entry.name)) await removeIfStale(join(dirPath, entry.name), this.now());
        if (INTERNAL.test(entry.name)) continue;
        const key = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(key);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          keys.push(key);
        }
      }
    };
    await walk(startRel);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // Several stats at a time, still in key order: a job's finalize lists every one of its parts.
    for await (const info of mapOrdered(keys, 16, (key) => this.stat(key))) if (info) yield info;
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await fs.rm(path, { force: true });
      await fs.rm(metaPathOf(path), { force: true });
    } catch (err) {
      throw storageFailure('delete', { url: this.url, key }, err);
    }
  }

  async readText(key: string): Promise<string> {
    const path = this.pathOf(key);
    try {
      return await fs.readFile(path, 'utf8');
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'EISDIR') {
        throw new ObjectNotFoundError({ url: this.url, key, cause: err });
      }
      throw storageFailure('read', { url: this.url, key }, err);
    }
  }

  async writeText(key: string, text: string, options?: WriteOptions): Promise<void> {
    await this.writeBytes(key, text, options);
  }

  /** Directories this store made or found, so that a write into one does not ask for it again. */
  private readonly knownDirs = new Set<string>();

  /** Writes and fsyncs a new file, creating its directory unless this store already did (again if it went away). */
  private async writeNew(path: string, data: string | Uint8Array): Promise<void> {
    const dir = dirname(path);
    for (let tries = 0; ; tries++) {
      if (!this.knownDirs.has(dir)) {
        await fs.mkdir(dir, { recursive: true });
        this.knownDirs.add(dir);
      }
      try {
        await fs.writeFile(path, data, { flag: 'wx', flush: true });
        return;
      } catch (err) {
        if (tries > 0 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        this.knownDirs.delete(dir);
      }
    }
  }

  /**
   * A whole object in one step: what `openWrite` + `done()` do (temporary file, fsync, metadata, rename, directory
   * fsync), without a stream in between, for small objects and bodies already in memory.
   */
  async writeBytes(key: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<ObjectInfo> {
    const path = this.pathOf(key);
    const details = { url: this.url, key };
    const temp = tempPathOf(path);
    try {
      await this.writeNew(temp, data);
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw storageFailure('write', details, err);
    }
    try {
      await publishTemp(temp, path, options.metadata);
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw storageFailure('publish', details, err);
    }
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    return { key, size, metadata: { ...options.metadata } };
  }
}

/** Renames a complete temporary file into place, its metadata sidecar first, and makes both renames durable. */
async function publishTemp(temp: string, path: string, metadata: Record<string, string> | undefined): Promise<void> {
  // The metadata lands first: a reader that sees the new data also sees its metadata.
  const metaPath = metaPathOf(path);
  if (metadata && Object.keys(metadata).length > 0) {
    const metaTemp = tempPathOf(path);
    await fs.writeFile(metaTemp, JSON.stringify(metadata), { flush: true });
    await fs.rename(metaTemp, metaPath);
  } else {
    await fs.rm(metaPath, { force: true });
  }
  await fs.rename(temp, path);
  // The renames are durable only once the directory itself is on disk.
  await syncDirectory(dirname(path));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeIfStale(path: string, now: number): Promise<void> {
  try {
    const info = await fs.stat(path);
    if (now - info.mtimeMs >= STALE_TEMP_MS) await fs.rm(path, { force: true });
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
}

/**
 * An object's metadata sidecar; one that is not a JSON object of strings (cut short, edited by hand) reads as no
 * metadata, as a missing one does: the object is then not trusted as a part, instead of every stat failing forever.
 */
async function readMetadata(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await fs.readFile(metaPathOf(path), 'utf8');
  } catch (err) {
    if (isMissing(err)) return {};
    throw err;
  }
  try {
    const parsed = metadataSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

const metadataSchema = z.record(z.string(), z.string());

/** Writes to a fresh temporary file beside `target` (creating directories); fsyncs it on end. */
class TempFileSink extends Writable {
  readonly tempPath: string;
  bytes = 0;
  private handle: FileHandle | undefined;

  constructor(target: string) {
    super({ highWaterMark: 256 * 1024 });
    this.tempPath = tempPathOf(target);
  }

  override _construct(callback: (error?: Error | null) => void): void {
    fs.mkdir(dirname(this.tempPath), { recursive: true })
      .then(() => fs.open(this.tempPath, 'wx'))
      .then((handle) => {
        this.handle = handle;
        callback();
      }, callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    const buffers = chunks.map(({ chunk }) => chunk);
    this.writeAll(buffers).then(() => callback(), callback);
  }

  private async writeAll(buffers: Buffer[]): Promise<void> {
    let pending = buffers;
    while (pending.length > 0) {
      const { bytesWritten } = await this.handle!.writev(pending);
      this.bytes += bytesWritten;
      pending = dropBytes(pending, bytesWritten);
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.handle!.sync()
      .then(() => this.handle!.close())
      .then(() => {
        this.handle = undefined;
        callback();
      }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const handle = this.handle;
    this.handle = undefined;
    (handle ? handle.close() : Promise.resolve()).then(
      () => callback(error),
      () => callback(error),
    );
  }

  /** Removes the temporary file (after an error or abort). */
  async discard(): Promise<void> {
    if (!this.destroyed) this.destroy();
    await finished(this).catch(() => {});
    await fs.rm(this.tempPath, { force: true });
  }
}

function dropBytes(buffers: Buffer[], count: number): Buffer[] {
  const rest: Buffer[] = [];
  let skip = count;
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}
