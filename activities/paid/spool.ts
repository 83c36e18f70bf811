import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageRefusedError } from '../../connectors/errors.ts';
import type { Store, WriteOptions } from '../../connectors/storage/store.ts';
import { writeBody } from '../../connectors/storage/store-io.ts';
import { partFingerprint } from '../run/parts.ts';

/**
 * The worker's local spool (`SIGNAL_KIT_SPOOL_DIR`): where a paid answer's part goes when the output refuses it for
 * a reason no retry cures (a full disk or quota, a read-only file system, access denied, a missing bucket). The job
 * stops (the failure is fatal), and once someone has fixed the storage, running the same command again publishes the
 * spooled objects first, before any call is made, so the answer is not paid for again. A spooled object is exactly
 * what the write tried to publish (its bytes and metadata), so it is published as it would have been. The spool is
 * local to the worker that wrote it: a re-run served by another machine pays again (and its manifest says so), and
 * what that re-run publishes wins: a spooled batch is published only while the batch's part is still the one the
 * refused write meant to replace (its `guard`), as an attempt that lost the race to save its part is dropped.
 *
 * Only a job's paid batch outputs (its part and its tables) are spooled, whatever the kind of job batch: they all
 * publish through `publishPaidPart` (activities/paid/paid-call.ts), and every job batch publishes the spool first
 * (activities/paid/paid-batch.ts). A scheduled push's fetch (activities/push/fetch.ts) publishes through the same
 * `publishPaidPart` (its lines part, tables and answer record kept as one write) and publishes its run's spool first.
 * A scheduled feed's call (activities/feeds/fetch.ts) does the same with its saved answer.
 *
 * Objects are kept per output and per job (`<dir>/<output digest>/<job digest>/`), so that the check every batch
 * makes before paying reads one directory, usually absent, however much other jobs left there.
 */
export class PartSpool {
  readonly dir: string;
  #seq = 0;

  constructor(dir: string) {
    this.dir = dir;
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
   * marker). A refusal again is thrown: the job stops again before a paid call. The keys published are added to
   * `published` when given.
   */
  async publish(store: Store, prefix: string | readonly string[], published?: string[]): Promise<number> {
    const prefixes = typeof prefix === 'string' ? [prefix] : prefix;
    if (prefixes.length === 0) return 0;
    // Every prefix lies in one top folder (a job's id, a push's name): that folder's objects are in one directory.
    const dir = this.#dirOf(store.url, prefixes[0]!);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
    } catch {
      return 0;
    }
    // Grouped by the refused write that kept them, in the order of each write's first object: two attempts of one
    // batch kept at once interleave their objects, and the tables must go (or be dropped) with their own part.
    const writes = new Map<string, { name: string; meta: SpooledObject }[]>();
    for (const name of names) {
      let meta: SpooledObject;
      try {
        meta = JSON.parse(await readFile(join(dir, name), 'utf8')) as SpooledObject;
      } catch {
        continue; // published meanwhile by another batch of the job
      }
      if (meta.url !== store.url || !prefixes.some((p) => meta.key.startsWith(p))) continue;
      const write = meta.guard?.write ?? name;
      writes.set(write, [...(writes.get(write) ?? []), { name, meta }]);
    }
    let count = 0;
    for (const objects of writes.values()) {
      const current = await this.#current(store, objects[0]!.meta);
      for (const { name, meta } of objects) {
        const bodyPath = join(dir, name.replace(/\.json$/, '.bin'));
        if (current) {
          let body: Buffer;
          try {
            body = await readFile(bodyPath);
          } catch {
            continue; // published meanwhile by another batch of the job
          }
          await writeBody(store, meta.key, body, meta.options);
          count += 1;
          published?.push(meta.key);
        }
        await rm(join(dir, name), { force: true });
        await rm(bodyPath, { force: true });
      }
    }
    return count;
  }

  /** Whether the batch part `object` belongs with is still the one its refused write meant to replace. */
  async #current(store: Store, object: SpooledObject): Promise<boolean> {
    if (!object.guard) return true;
    return (await partFingerprint(store, object.guard.key)) === (object.guard.fingerprint ?? undefined);
  }

  async #keepOrThrow(
    url: string,
    key: string,
    data: string | Uint8Array,
    options: WriteOptions | undefined,
    guard: (SpoolGuard & { write: string }) | undefined,
  ): Promise<void> {
    const dir = this.#dirOf(url, key);
    await mkdir(dir, { recursive: true });
    const name = `${Date.now().toString().padStart(15, '0')}-${String(this.#seq++).padStart(6, '0')}-${digest(key).slice(0, 16)}`;
    const body = join(dir, `${name}.bin`);
    await writeFile(`${body}.tmp`, data);
    await rename(`${body}.tmp`, body);
    const meta: SpooledObject = {
      url,
      key,
      ...(options ? { options } : {}),
      ...(guard ? { guard: { key: guard.key, fingerprint: guard.fingerprint ?? null, write: guard.write } } : {}),
    };
    await writeFile(join(dir, `${name}.json.tmp`), JSON.stringify(meta));
    // The metadata last: a body without it is ignored.
    await rename(join(dir, `${name}.json.tmp`), join(dir, `${name}.json`));
  }

  /** Keeps a refused object; a spool that cannot keep it either leaves the failure as it was (the marker counts it). */
  async keep(
    url: string,
    key: string,
    data: string | Uint8Array,
    options?: WriteOptions,
    guard?: SpoolGuard & { write: string },
  ): Promise<boolean> {
    try {
      await this.#keepOrThrow(url, key, data, options, guard);
      return true;
    } catch {
      return false;
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

const digest = (text: string) => createHash('sha256').update(text).digest('hex');
