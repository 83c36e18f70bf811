import { Worker } from 'node:worker_threads';

/**
 * The thread's whole program, evaluated as CommonJS so that it runs the same from the TypeScript sources and from
 * the build. It hashes each block it receives and hands the block back for reuse.
 */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const hash = require('node:crypto').createHash('sha256');
parentPort.on('message', (message) => {
  if (message === 'digest') return parentPort.postMessage({ digest: hash.digest('hex') });
  hash.update(new Uint8Array(message.block, 0, message.length));
  parentPort.postMessage({ block: message.block }, [message.block]);
});
`;

const BLOCK_BYTES = 1024 * 1024;
const BLOCKS = 4;

/**
 * SHA-256 of a byte stream computed on its own thread, so that hashing a large download overlaps with the main
 * thread's I/O instead of adding to it. `update` copies the bytes into one of a few fixed blocks (memory stays at
 * BLOCKS × BLOCK_BYTES) and returns a promise only when every block is still being hashed: the caller waits on it,
 * which is the backpressure. Call `close()` in every case (it ends the thread).
 */
export class Sha256Thread {
  readonly #thread = new Worker(THREAD_SOURCE, { eval: true });
  readonly #free: ArrayBuffer[] = Array.from({ length: BLOCKS }, () => new ArrayBuffer(BLOCK_BYTES));
  #current: Uint8Array | undefined;
  #filled = 0;
  #waiting: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #digest: { resolve: (hex: string) => void; reject: (error: Error) => void } | undefined;
  #failure: Error | undefined;

  constructor() {
    this.#thread.on('message', (message: { block?: ArrayBuffer; digest?: string }) => {
      if (message.digest !== undefined) {
        this.#digest?.resolve(message.digest);
        return;
      }
      if (message.block) this.#free.push(message.block);
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.resolve();
    });
    this.#thread.on('error', (error) => this.#fail(error));
    this.#thread.on('exit', (code) => this.#fail(new Error(`the hashing thread exited (code ${code})`)));
  }

  /** Feeds `chunk`; a returned promise must settle before the next call. */
  update(chunk: Uint8Array): Promise<void> | undefined {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#failure) return Promise.reject(this.#failure);
      if (!this.#current) {
        const block = this.#free.pop();
        if (!block) return this.#whenBlockFree().then(() => this.update(chunk.subarray(offset)));
        this.#current = new Uint8Array(block);
        this.#filled = 0;
      }
      const taken = Math.min(chunk.length - offset, BLOCK_BYTES - this.#filled);
      this.#current.set(chunk.subarray(offset, offset + taken), this.#filled);
      this.#filled += taken;
      offset += taken;
      if (this.#filled === BLOCK_BYTES) this.#send();
    }
    return undefined;
  }

  /** The hex digest of everything fed so far; `update` must not be called again. */
  async digest(): Promise<string> {
    if (this.#failure) throw this.#failure;
    if (this.#current && this.#filled > 0) this.#send();
    return new Promise<string>((resolve, reject) => {
      this.#digest = { resolve, reject };
      this.#thread.postMessage('digest');
    });
  }

  async close(): Promise<void> {
    this.#thread.removeAllListeners('exit');
    await this.#thread.terminate();
  }

  #send(): void {
    const block = this.#current!.buffer as ArrayBuffer;
    this.#thread.postMessage({ block, length: this.#filled }, [block]);
    this.#current = undefined;
    this.#filled = 0;
  }

  #whenBlockFree(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#waiting?.reject(this.#failure);
    this.#digest?.reject(this.#failure);
    this.#waiting = undefined;
    this.#digest = undefined;
  }
}
