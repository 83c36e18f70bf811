import type { Readable, Writable } from 'node:stream';

/**
 * One interface over file://, s3:// and gs:// locations. Keys are relative to the store's base URL
 * (`s3://bucket/prefix` + `job/parts/part-00000.jsonl.gz`).
 *
 * Objects appear atomically: a write becomes visible only when `ObjectWriter.done()` resolves, and an aborted
 * write leaves nothing behind. Small string metadata travels with the object and is published in the same atomic
 * step (S3 user metadata, GCS custom metadata, a sidecar renamed before the data file for file://), which lets a
 * job record a part's counts in the part itself.
 */
export interface Store {
  /** The base URL this store was opened on, normalized (`file:///abs/dir`, `s3://bucket/prefix`, `gs://bucket/prefix`). */
  readonly url: string;
  /** The full URL of a key, for logs and manifests. */
  urlOf(key: string): string;
  /** A stream of the object's bytes. Rejects with `ObjectNotFoundError` when absent. */
  openRead(key: string): Promise<Readable>;
  /** A writer with backpressure; nothing is visible until `done()` resolves. */
  openWrite(key: string, options?: WriteOptions): ObjectWriter;
  /** Size and metadata of an object, or undefined when absent. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  exists(key: string): Promise<boolean>;
  /** Objects whose key starts with `prefix`, in lexicographic key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** Removes the object; absent objects are not an error. */
  delete(key: string): Promise<void>;
  readText(key: string): Promise<string>;
  writeText(key: string, text: string, options?: WriteOptions): Promise<void>;
  /**
   * Optional: publishes a body already in memory in one step, as `openWrite` + `done()` would, without the cost of a
   * stream (a store that has a cheaper way than its stream offers it; `writeBody` in store-io.ts picks it).
   */
  writeBytes?(key: string, data: string | Uint8Array, options?: WriteOptions): Promise<ObjectInfo>;
}

export interface WriteOptions {
  contentType?: string;
  /** String values only; keys in lower case. */
  metadata?: Record<string, string>;
}

export interface ObjectInfo {
  key: string;
  size: number;
  metadata: Record<string, string>;
}

export interface ObjectWriter {
  /** Write the bytes here; honours backpressure. End it (or pipe into it) before calling `done()`. */
  readonly stream: Writable;
  /** Resolves once the object is published. */
  done(): Promise<ObjectInfo>;
  /** Discards everything written; nothing becomes visible. */
  abort(reason?: unknown): Promise<void>;
}
