import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectNotFoundError } from './errors.ts';
import type { ObjectInfo, Store, WriteOptions } from './store.ts';

/**
 * Streams `source` into `key` and publishes it; if the source fails, the write is aborted and nothing appears.
 */
export async function writeStream(
  store: Store,
  key: string,
  source: Readable | AsyncIterable<Uint8Array | string>,
  options?: WriteOptions,
): Promise<ObjectInfo> {
  const writer = store.openWrite(key, options);
  try {
    await pipeline(source, writer.stream);
  } catch (err) {
    await writer.abort(err);
    throw err;
  }
  return await writer.done();
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

export async function readText(store: Store, key: string): Promise<string> {
  return (await readAll(await store.openRead(key))).toString('utf8');
}

/** A JSON object's parsed content, or undefined when there is none: one request, where a stat and a read take two. */
export async function readJsonIfPresent<T>(store: Store, key: string): Promise<T | undefined> {
  try {
    return JSON.parse(await store.readText(key)) as T;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
}

export async function writeText(store: Store, key: string, text: string, options?: WriteOptions): Promise<void> {
  await writeBody(store, key, text, options);
}

/** Publishes a body already in memory: the store's `writeBytes` when it has one, else its writer. */
export async function writeBody(
  store: Store,
  key: string,
  body: string | Uint8Array,
  options?: WriteOptions,
): Promise<ObjectInfo> {
  if (store.writeBytes) return await store.writeBytes(key, body, options);
  const writer = store.openWrite(key, options);
  writer.stream.end(body);
  return await writer.done();
}
