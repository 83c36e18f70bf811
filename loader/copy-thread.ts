/**
 * The main thread's side of the converter thread (copy-worker.ts): a part's bytes go in, a stream of its COPY text
 * comes out. Converting (gunzip and JSONL to COPY text, or Parquet decoding) runs beside the main thread, which only
 * writes the chunks into COPY, so that the server never waits on the conversion of the part it is copying.
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

const workerFile = new URL(`./copy-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class CopyThread {
  readonly #worker: Worker;
  readonly #parts = new Map<number, PartChunks>();
  #next = 0;
  #failure: Error | undefined;

  constructor() {
    this.#worker = new Worker(workerFile);
    // A load that stops early (an error elsewhere) must not be kept alive by its converter.
    this.#worker.unref();
    type Message = { id: number; chunk?: Uint8Array; done?: true; nul?: number; error?: WorkerError };
    this.#worker.on('message', (message: Message) => {
      const part = this.#parts.get(message.id);
      if (!part) return;
      if (message.chunk)
        part.chunks.push(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
      else {
        if (message.error) part.error = rebuilt(message.error);
        if (message.nul) part.count.nul += message.nul;
        part.done = true;
        this.#parts.delete(message.id);
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
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the load's converter thread stopped (exit code ${code})`)));
  }

  /**
   * The part's COPY text, converted in the other thread; `bytes` is handed over (not to be used after). The NULs
   * replaced by their stand-in are added to `count` once the part is converted.
   */
  convert(spec: PartCopySpec, key: string, bytes: Buffer, count: NulCount): Readable {
    const part = new PartChunks(() => this.#worker.postMessage({ read: 1 }), count);
    if (this.#failure) part.error = this.#failure;
    else {
      const id = this.#next++;
      this.#parts.set(id, part);
      const [data, transfer] = transferable(bytes);
      this.#worker.postMessage({ id, key, bytes: data, spec }, transfer);
    }
    // One chunk at a time: the stream reading ahead would tell the converter to send more than CHUNKS_AHEAD.
    return Readable.from(part.read(), { highWaterMark: 1 });
  }

  async close(): Promise<void> {
    this.#worker.removeAllListeners('exit');
    await this.#worker.terminate();
  }
}
