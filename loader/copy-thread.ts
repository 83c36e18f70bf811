/**
 * The main thread's side of the converter thread (copy-worker.ts): a part's bytes go in as the converter asks for
 * them (or, for Parquet, the path of its private copy), a stream of its COPY text comes out. Converting (gunzip and
 * JSONL to COPY text, or Parquet decoding) runs beside the main thread, which only reads the part and writes the
 * chunks into COPY, so that the server never waits on the conversion of the part it is copying. Both ways are held
 * back: the part is read no further than the converter asked, the converter converts no further than COPY took.
 */
import { Readable } from 'node:stream';
import { isMarkedAsUntransferable, Worker } from 'node:worker_threads';
import { ManifestError } from '../connectors/errors.ts';
import type { NulCount } from '../connectors/postgres/index.ts';
import type { PartCopySpec } from './part-copy.ts';

/**
 * Node's pool for small buffers is shared (and some of Node's memory cannot be handed over): only a buffer that owns a
 * large memory of its own is handed over whole.
 */
const OWN_MEMORY = 64 * 1024;

/** Bytes to post to the other thread, and what to hand over with them (nothing when they are copied). */
export function transferable(bytes: Uint8Array): [Uint8Array, ArrayBuffer[]] {
  const memory = bytes.buffer;
  if (memory instanceof ArrayBuffer && memory.byteLength >= OWN_MEMORY && !isMarkedAsUntransferable(memory))
    return [bytes, [memory]];
  return [new Uint8Array(bytes), []];
}

/**
 * A chunk read from a store, to hand to the other thread: handed over when it is the whole of a large memory of its
 * own (a file's chunks are), else copied into memory of its own, since it may share its memory with other chunks.
 */
function handOver(bytes: Uint8Array): [Uint8Array, ArrayBuffer[]] {
  const memory = bytes.buffer;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === memory.byteLength;
  if (whole && memory instanceof ArrayBuffer && memory.byteLength >= OWN_MEMORY && !isMarkedAsUntransferable(memory))
    return [bytes, [memory]];
  const copy = new Uint8Array(bytes);
  return [copy, [copy.buffer]];
}

interface WorkerError {
  name: string;
  message: string;
  url?: string;
}

/** The converter's error as the kit's own: a part that is not the table's is a ManifestError naming it. */
function rebuilt(error: WorkerError): Error {
  if (error.name === 'ManifestError' && error.url !== undefined) {
    const prefix = `manifest ${error.url}: `;
    return new ManifestError(
      error.url,
      error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message,
    );
  }
  const rebuiltError = error.name === 'SyntaxError' ? new SyntaxError(error.message) : new Error(error.message);
  rebuiltError.name = error.name;
  return rebuiltError;
}

/**
 * Converted chunks the converter may have sent and the main thread not yet read (copy-worker.ts waits for more
 * room): with COPY slower than the conversion, what waits in memory is these few chunks, never a whole part.
 */
export const CHUNKS_AHEAD = 4;

/**
 * One part's chunks as they arrive; the error, if any, is thrown when the stream reaches it (never unheard). Each chunk
 * read is told to the converter (`read`), which sends the next.
 */
class PartChunks {
  readonly chunks: Buffer[] = [];
  done = false;
  error: Error | undefined;
  #wake: (() => void) | undefined;
  readonly #read: () => void;
  /** Where the NULs the converter replaced in this part are added. */
  readonly count: NulCount;

  constructor(read: () => void, count: NulCount) {
    this.#read = read;
    this.count = count;
  }

  notify(): void {
    this.#wake?.();
    this.#wake = undefined;
  }

  async *read(): AsyncGenerator<Buffer> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        this.#read();
        yield chunk;
      } else if (this.error) throw this.error;
      else if (this.done) return;
      else await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

/**
 * A part's bytes as the converter asks for them (`want`), read from the part's checked stream one chunk at a time:
 * what waits in memory is the few chunks asked for ahead. Its reading failing (a part not its manifest's) fails the part
 * at once and stops the converter's reading of it.
 */
class PartFeed {
  #wanted = 0;
  #running = false;
  #closed = false;
  readonly #chunks: AsyncIterator<Buffer>;
  readonly post: (message: object, transfer?: ArrayBuffer[]) => void;
  readonly fail: (error: Error) => void;

  constructor(
    chunks: AsyncIterable<Buffer>,
    post: (message: object, transfer?: ArrayBuffer[]) => void,
    fail: (error: Error) => void,
  ) {
    this.#chunks = chunks[Symbol.asyncIterator]();
    this.post = post;
    this.fail = fail;
  }

  want(count: number): void {
    this.#wanted += count;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#wanted > 0 && !this.#closed) {
        const next = await this.#chunks.next();
        if (this.#closed) break;
        if (next.done) {
          this.#closed = true;
          this.post({ end: true });
          break;
        }
        this.#wanted -= 1;
        const [data, transfer] = handOver(next.value);
        this.post({ raw: data }, transfer);
      }
    } catch (error) {
      this.#closed = true;
      this.fail(error as Error);
      this.post({ fail: true });
    } finally {
      this.#running = false;
    }
  }

  /** Stops reading the part (its stream closed once a read in progress ends). */
  close(): void {
    if (this.#closed && !this.#running) return;
    this.#closed = true;
    this.#chunks.return?.().catch(() => {});
  }
}

/** What a part is converted from: its checked bytes as they are read, or the path of a Parquet part's private copy. */
export type ThreadInput = { bytes: number } & ({ chunks: AsyncIterable<Buffer> } | { file: string });

const workerFile = new URL(`./copy-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class CopyThread {
  readonly #worker: Worker;
  readonly #parts = new Map<number, PartChunks>();
  readonly #feeds = new Map<number, PartFeed>();
  #next = 0;
  #failure: Error | undefined;

  constructor() {
    this.#worker = new Worker(workerFile);
    // A load that stops early (an error elsewhere) must not be kept alive by its converter.
    this.#worker.unref();
    type Message = {
      id: number;
      pull?: number;
      chunk?: Uint8Array;
      done?: true;
      nul?: number;
      error?: WorkerError;
    };
    this.#worker.on('message', (message: Message) => {
      if (message.pull) {
        this.#feeds.get(message.id)?.want(message.pull);
        return;
      }
      const part = this.#parts.get(message.id);
      if (!part) return;
      if (message.chunk)
        part.chunks.push(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
      else {
        // An error of the part's reading (main thread) came first: the converter's, about the stopped bytes, is not news.
        if (message.error) part.error ??= rebuilt(message.error);
        if (message.nul) part.count.nul += message.nul;
        part.done = true;
        this.#parts.delete(message.id);
        this.#feeds.get(message.id)?.close();
        this.#feeds.delete(message.id);
      }
      part.notify();
    });
    const fail = (error: Error) => {
      this.#failure = error;
      for (const part of this.#parts.values()) {
        part.error = error;
        part.notify();
      }
      this.#parts.clear();
      this.#closeFeeds();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the load's converter thread stopped (exit code ${code})`)));
  }

  /**
   * The part's COPY text, converted in the other thread from `input`, whose chunks are read only as the converter
   * asks for them (and their stream's error fails the part). The NULs replaced by their stand-in are added to `count`
   * once the part is converted.
   */
  convert(spec: PartCopySpec, key: string, input: ThreadInput, count: NulCount): Readable {
    const part = new PartChunks(() => this.#worker.postMessage({ read: 1 }), count);
    if (this.#failure) part.error = this.#failure;
    else {
      const id = this.#next++;
      this.#parts.set(id, part);
      if ('chunks' in input) {
        const post = (message: object, transfer?: ArrayBuffer[]) =>
          this.#worker.postMessage({ id, ...message }, transfer);
        const fail = (error: Error) => {
          part.error ??= error;
          part.notify();
        };
        this.#feeds.set(id, new PartFeed(input.chunks, post, fail));
        this.#worker.postMessage({ id, key, spec, bytes: input.bytes });
      } else this.#worker.postMessage({ id, key, spec, bytes: input.bytes, file: input.file });
    }
    // One chunk at a time: the stream reading ahead would tell the converter to send more than CHUNKS_AHEAD.
    return Readable.from(part.read(), { highWaterMark: 1 });
  }

  #closeFeeds(): void {
    for (const feed of this.#feeds.values()) feed.close();
    this.#feeds.clear();
  }

  async close(): Promise<void> {
    this.#worker.removeAllListeners('exit');
    this.#closeFeeds();
    await this.#worker.terminate();
  }
}
