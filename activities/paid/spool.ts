import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageRefusedError } from '../../connectors/errors.ts';
import { STALE_TEMP_MS } from '../../connectors/storage/file.ts';
import type { Store, WriteOptions } from '../../connectors/storage/store.ts';
import { writeBody } from '../../connectors/storage/store-io.ts';
import { partFingerprint, spooledPartProblem } from '../run/parts.ts';

/**
 * The worker's local spool (`SIGNAL_KIT_SPOOL_DIR`, by default in the user's state directory: config/worker.ts):
 * where a paid answer's part goes when the output refuses it for a reason no retry cures (a full disk or quota, a
 * read-only file system, access denied, a missing bucket). The job stops (the failure is fatal), and once someone has
 * fixed the storage, running the same command again publishes the spooled objects first, before any call is made, so
 * the answer is not paid for again. A spooled object is exactly what the write tried to publish (its bytes and
 * metadata), so it is published as it would have been. The spool is local to the worker that wrote it: a re-run
 * served by another machine pays again (and its manifest says so), and what that re-run publishes wins: a spooled
 * batch is published only while the batch's part is still the one the refused write meant to replace (its `guard`),
 * as an attempt that lost the race to save its part is dropped.
 *
 * Only a job's paid batch outputs (its part and its tables) are spooled, whatever the kind of job batch: they all
 * publish through `publishPaidPart` (activities/paid/paid-call.ts), and every job batch publishes the spool first
 * (activities/paid/paid-batch.ts). A scheduled push's fetch (activities/push/fetch.ts) publishes through the same
 * `publishPaidPart` (its lines part, tables and answer record kept as one write) and publishes its run's spool first.
 * A scheduled feed's call (activities/feeds/fetch.ts) does the same with its saved answer.
 *
 * Objects are kept per output and per job (`<dir>/<output digest>/<job digest>/`), so that the check every batch
 * makes before paying reads one directory, usually absent, however much other jobs left there.
 *
 * The spool holds paid answers (contact names and emails among them), so it is the worker's user's alone: the worker
 * creates it 0700 and refuses one that another user owns, that others may write to, or that is a symbolic link
 * (config/spool.ts).
 * Entries are written 0600 to a temporary file that is fsynced and renamed into place (and removed when the write
 * fails). When the spool's disk refuses too (often it is the output's own full disk), the object is held in the
 * worker's memory instead (up to `MAX_HELD_BYTES`), so that running the job again on this worker still pays nothing
 * again. An object is published only if its key lies in the folder being published and it passes the proof a part
 * found in the output must pass (parts.ts `spooledPartProblem`): nothing planted in the spool reaches the output.
 */
export class PartSpool {
  readonly dir: string;
  #seq = 0;
  /** Objects the spool's disk refused too, by their folder (`#dirOf`) and name: kept until published. */
  readonly #held = new Map<string, Map<string, { meta: SpooledObject; body: Buffer }>>();
  #heldBytes = 0;

  /** A spool at `dir`, its directory unchecked (tests); a worker uses `PartSpool.open`. */
  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * The worker's spool at `dir`, a directory already found to be the worker's user's alone (config/spool.ts
   * `ownSpoolDir`); the temporary files a crashed worker left there are removed.
   */
  static async open(dir: string): Promise<PartSpool> {
    await removeLeftovers(dir, 3);
    return new PartSpool(dir);
  }

  /**
   * `store` as seen by a write that the storage refused: every output written to it goes to the spool instead (and
   * counts as written, so that a part's tables and the part itself are all kept). Reads go to the store. `guard`: the
   * batch's part and the fingerprint it had when the write was decided (undefined: there was none).
   */
  keepOnly(store: Store, guard: SpoolGuard): Store {
    const spooling = Object.create(store) as Store;
    // The objects of one refused write (a part's tables and the part) are published or dropped together.
    const write = randomBytes(8).toString('hex');
    spooling.writeBytes = async (key: string, data: string | Uint8Array, options?: WriteOptions) => {
      if (!(await this.keep(store.url, key, data, options, { ...guard, write }))) {
        throw new StorageRefusedError('the spool could not keep this object either', {
          url: store.url,
          key,
          reason: 'spool',
        });
      }
      return {
        key,
        size: typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength,
        metadata: options?.metadata ?? {},
      };
    };
    return spooling;
  }

  /**
   * Publishes what the spool holds for `store` under the job folder `prefix` (`<jobId>/`, layout.ts `jobPrefix`; a
   * push run's two folders, its signals and its work, activities/push/layout.ts), in the order it was written (a
   * part's tables before the part that marks its batch done), and forgets each once published. The objects of a
   * refused write whose batch part changed since (another worker's run saved the batch, or another attempt's kept
   * answer was published first) are forgotten unread: its answer stays counted as paid and not saved (its call's
   * marker). So are the objects of a write one of which does not prove itself (a key outside the folder, bytes or
   * metadata that are not what a part of this folder records): they were not written by this worker. A refusal again
   * is thrown: the job stops again before a paid call. The keys published are added to `published` when given.
   */
  async publish(store: Store, prefix: string | readonly string[], published?: string[]): Promise<number> {
    const prefixes = typeof prefix === 'string' ? [prefix] : prefix;
    if (prefixes.length === 0) return 0;
    // Every prefix lies in one top folder (a job's id, a push's name): that folder's objects are in one directory.
    const dir = this.#dirOf(store.url, prefixes[0]!);
    const held = this.#held.get(dir);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    } catch {
      names = [];
    }
    if (names.length === 0 && !held?.size) return 0;
    names = [...new Set([...names, ...(held?.keys() ?? [])])].sort();
    // Grouped by the refused write that kept them, in the order of each write's first object: two attempts of one
    // batch kept at once interleave their objects, and the tables must go (or be dropped) with their own part.
    const writes = new Map<string, SpoolEntry[]>();
    for (const name of names) {
      const entry = await this.#read(dir, name);
      if (!entry) continue; // published meanwhile by another batch of the job
      if (entry.meta.url !== store.url || !prefixes.some((p) => liesIn(entry.meta.key, p))) continue;
      const write = entry.meta.guard?.write ?? name;
      writes.set(write, [...(writes.get(write) ?? []), entry]);
    }
    let count = 0;
    for (const entries of writes.values()) {
      const proven = entries.every(
        (entry) => spooledPartProblem(entry.meta.key, entry.body, entry.meta.options?.metadata) === undefined,
      );
      const current = proven && (await this.#current(store, entries[0]!.meta));
      for (const entry of entries) {
        if (current) {
          await writeBody(store, entry.meta.key, entry.body, entry.meta.options);
          count += 1;
          published?.push(entry.meta.key);
        }
        await this.#forget(dir, entry.name);
      }
    }
    return count;
  }

  /** Whether the batch part `object` belongs with is still the one its refused write meant to replace. */
  async #current(store: Store, object: SpooledObject): Promise<boolean> {
    if (!object.guard) return true;
    return (await partFingerprint(store, object.guard.key)) === (object.guard.fingerprint ?? undefined);
  }

  /** The object `name` kept in `dir` (held in memory, or on disk), or undefined when it is gone or unreadable. */
  async #read(dir: string, name: string): Promise<SpoolEntry | undefined> {
    const held = this.#held.get(dir)?.get(name);
    if (held) return { name, ...held };
    try {
      const meta = JSON.parse(await readFile(join(dir, name), 'utf8')) as SpooledObject;
      if (typeof meta?.key !== 'string' || typeof meta.url !== 'string') return undefined;
      return { name, meta, body: await readFile(join(dir, bodyName(name))) };
    } catch {
      return undefined;
    }
  }

  async #forget(dir: string, name: string): Promise<void> {
    const held = this.#held.get(dir);
    const entry = held?.get(name);
    if (held && entry) {
      this.#heldBytes -= entry.body.length;
      held.delete(name);
      if (held.size === 0) this.#held.delete(dir);
      return;
    }
    await rm(join(dir, name), { force: true });
    await rm(join(dir, bodyName(name)), { force: true });
  }

  /**
   * Keeps a refused object: on the spool's disk, else (that disk refuses too) in the worker's memory. False when
   * neither can: the failure stays as it was (the call's marker counts the answer as paid and not saved).
   */
  async keep(
    url: string,
    key: string,
    data: string | Uint8Array,
    options?: WriteOptions,
    guard?: SpoolGuard & { write: string },
  ): Promise<boolean> {
    const dir = this.#dirOf(url, key);
    const name = `${Date.now().toString().padStart(15, '0')}-${String(this.#seq++).padStart(6, '0')}-${digest(key).slice(0, 16)}.json`;
    const meta: SpooledObject = {
      url,
      key,
      ...(options ? { options } : {}),
      ...(guard ? { guard: { key: guard.key, fingerprint: guard.fingerprint ?? null, write: guard.write } } : {}),
    };
    // A copy: the writer frees a part's buffer once it is written (parts.ts `releaseBody`).
    const body = Buffer.from(typeof data === 'string' ? Buffer.from(data) : data);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeEntry(dir, name, meta, body);
      return true;
    } catch {
      if (this.#heldBytes + body.length > MAX_HELD_BYTES) return false;
      this.#heldBytes += body.length;
      const held = this.#held.get(dir) ?? new Map<string, { meta: SpooledObject; body: Buffer }>();
      held.set(name, { meta, body });
      this.#held.set(dir, held);
      return true;
    }
  }

  /**
   * The folder of `key`'s job in the output at `url`: a job's objects all lie under its id's folder (layout.ts), a
   * push's under its name's.
   */
  #dirOf(url: string, key: string): string {
    const job = key.slice(0, key.indexOf('/') + 1);
    return join(this.dir, digest(url).slice(0, 24), digest(job).slice(0, 16));
  }
}

/** The batch part a spooled object belongs with, and its fingerprint (parts.ts) when the refused write was decided. */
export interface SpoolGuard {
  key: string;
  fingerprint: string | undefined;
}

interface SpooledObject {
  url: string;
  key: string;
  options?: WriteOptions;
  /**
   * Published only while the batch's part still has this fingerprint (null: while there is none), together with the
   * other objects of the same refused `write` (absent in objects kept before writes were told apart: alone).
   */
  guard?: { key: string; fingerprint: string | null; write?: string };
}

interface SpoolEntry {
  /** Its metadata file's name (`<time>-<seq>-<key digest>.json`); the body is the `.bin` beside it. */
  name: string;
  meta: SpooledObject;
  body: Buffer;
}

/** The most the spool holds in the worker's memory when its disk refuses too; past it, an answer is not kept. */
export const MAX_HELD_BYTES = 512 * 1024 * 1024;

/** A write in progress (`<name>.<random hex>.tmp`, `writeDurably`; `<name>.bin.tmp` from earlier versions). */
const TEMP_FILE = /\.tmp$/;

const digest = (text: string) => createHash('sha256').update(text).digest('hex');
const bodyName = (name: string) => name.replace(/\.json$/, '.bin');

/**
 * Whether `key` lies in the folder `prefix` (ending with `/`) as a path: no empty, `.` or `..` segment and no
 * backslash, so that no store resolves it outside that folder.
 */
function liesIn(key: string, prefix: string): boolean {
  if (!prefix.endsWith('/') || !key.startsWith(prefix) || key.includes('\\')) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** One kept object: its body, then its metadata (a body without metadata is ignored), then the folder made durable. */
async function writeEntry(dir: string, name: string, meta: SpooledObject, body: Buffer): Promise<void> {
  try {
    await writeDurably(join(dir, bodyName(name)), body);
    await writeDurably(join(dir, name), JSON.stringify(meta));
    await syncDirectory(dir);
  } catch (error) {
    await rm(join(dir, name), { force: true }).catch(() => undefined);
    await rm(join(dir, bodyName(name)), { force: true }).catch(() => undefined);
    throw error;
  }
}

/** Writes `data` to `path` readable by the worker's user alone (0600), whole or not at all. */
async function writeDurably(path: string, data: string | Buffer): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes temporary files older than `STALE_TEMP_MS` (a crashed worker's) from `dir` and the folders below it. */
async function removeLeftovers(dir: string, depth: number): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  const now = Date.now();
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && depth > 1) await removeLeftovers(path, depth - 1);
    else if (entry.isFile() && TEMP_FILE.test(entry.name)) {
      const info = await stat(path).catch(() => undefined);
      if (info && now - info.mtimeMs >= STALE_TEMP_MS) await rm(path, { force: true }).catch(() => undefined);
    }
  }
}
