/**
 * The load's converter thread: turns the parts it is sent into COPY text (part-copy.ts) and sends the chunks back as
 * they are made, handing their memory over rather than copying it. A JSONL part's bytes are asked of the main thread
 * a few chunks ahead as they are converted (the main thread checks them against the manifest as it reads them); a
 * Parquet part is read from its private copy. Parts are converted one after the other, in the order they were sent.
 */
import { parentPort } from 'node:worker_threads';
import { CHUNKS_AHEAD, transferable } from './copy-thread.ts';
import { type PartCopySpec, type PartInput, partCopyText } from './part-copy.ts';

export interface ConvertRequest {
  id: number;
  key: string;
  spec: PartCopySpec;
  /** The part's size as its manifest lists it (and as its reading proves). */
  bytes: number;
  /** A Parquet part's private copy; without it, the part's bytes are asked for (`pull`) and come as `raw`. */
  file?: string;
}

/** A part's bytes as they arrive from the main thread. */
type Feed = { id: number; raw?: Uint8Array; end?: true; fail?: true };

/**
 * Chunks of a part's bytes asked for ahead of the one being converted: the part is read no further ahead than this,
 * so that with the conversion slower than the reading what waits is these few chunks, never a whole part.
 */
const INPUT_AHEAD = 2;

/**
 * Chunks this thread may send before the main thread has read them: the main thread says each time it has read one
 * (`{ read: 1 }`), so that a part converted faster than COPY takes it waits here, converted no further ahead.
 */
let credits = CHUNKS_AHEAD;
let wake: (() => void) | undefined;

async function send(port: NonNullable<typeof parentPort>, id: number, chunk: Buffer): Promise<void> {
  while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
  credits -= 1;
  const [data, transfer] = transferable(chunk);
  port.postMessage({ id, chunk: data }, transfer);
}

/** A part's bytes as the main thread sends them, asked for a chunk at a time as each is taken. */
class Incoming {
  readonly chunks: Buffer[] = [];
  ended = false;
  failed = false;
  #wake: (() => void) | undefined;
  readonly id: number;
  readonly port: NonNullable<typeof parentPort>;

  constructor(id: number, port: NonNullable<typeof parentPort>) {
    this.id = id;
    this.port = port;
  }

  take(feed: Feed): void {
    if (feed.raw) this.chunks.push(Buffer.from(feed.raw.buffer, feed.raw.byteOffset, feed.raw.byteLength));
    if (feed.end) this.ended = true;
    if (feed.fail) this.failed = true;
    this.#wake?.();
    this.#wake = undefined;
  }

  async *read(): AsyncGenerator<Buffer> {
    this.port.postMessage({ id: this.id, pull: INPUT_AHEAD });
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        this.port.postMessage({ id: this.id, pull: 1 });
        yield chunk;
      } else if (this.failed) throw new Error('the reading of the part failed');
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

const incoming = new Map<number, Incoming>();

async function convert(request: ConvertRequest, port: NonNullable<typeof parentPort>): Promise<void> {
  const { id, key, spec, bytes } = request;
  try {
    const feed = incoming.get(id);
    const input: PartInput =
      request.file !== undefined ? { bytes, file: request.file } : { bytes, chunks: (feed as Incoming).read() };
    const count = { nul: 0 };
    for await (const chunk of partCopyText(spec, key, input, count)) await send(port, id, chunk);
    port.postMessage({ id, done: true, nul: count.nul });
  } catch (error) {
    const e = error as { name?: string; message?: string; url?: string };
    port.postMessage({ id, error: { name: e.name ?? 'Error', message: e.message ?? String(error), url: e.url } });
  } finally {
    incoming.delete(id);
  }
}

const port = parentPort;
if (port) {
  let queue = Promise.resolve();
  port.on('message', (message: ConvertRequest | Feed | { read: number }) => {
    if ('read' in message) {
      credits += message.read;
      wake?.();
      wake = undefined;
      return;
    }
    if (!('spec' in message)) {
      incoming.get(message.id)?.take(message);
      return;
    }
    if (message.file === undefined) incoming.set(message.id, new Incoming(message.id, port));
    queue = queue.then(() => convert(message, port));
  });
}
