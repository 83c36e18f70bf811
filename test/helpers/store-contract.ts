import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ObjectNotFoundError,
  readAll,
  type Store,
  WriteAbortedError,
  writeStream,
} from '../../connectors/storage/index.ts';
import { pseudoRandomBytes, sha256OfStream } from '../integration/helpers/bytes.ts';

const MiB = 1024 * 1024;

async function keysOf(store: Store, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of store.list(prefix)) keys.push(info.key);
  return keys;
}

/**
 * The behaviour every Store backend must share. `store()` returns a store on a fresh, empty location; `bigSize`
 * is large enough to span several parts where the backend has parts (S3 multipart).
 */
export function describeStoreContract(name: string, store: () => Store, options: { bigSize?: number } = {}): void {
  const bigSize = options.bigSize ?? 3 * MiB + 17;

  describe(`Store contract: ${name}`, () => {
    it('writes and reads text, with size and metadata', async () => {
      const s = store();
      await s.writeText('a/b/hello.txt', 'hello, wörld\n', { metadata: { 'signal-kit-counts': '{"lines":1}' } });
      expect(await s.readText('a/b/hello.txt')).toBe('hello, wörld\n');
      expect(await s.exists('a/b/hello.txt')).toBe(true);
      expect(await s.stat('a/b/hello.txt')).toEqual({
        key: 'a/b/hello.txt',
        size: Buffer.byteLength('hello, wörld\n'),
        metadata: { 'signal-kit-counts': '{"lines":1}' },
      });
      expect(s.urlOf('a/b/hello.txt').endsWith('/a/b/hello.txt')).toBe(true);
    });

    it('reports absent objects: ObjectNotFoundError on read, undefined on stat, no error on delete', async () => {
      const s = store();
      await expect(s.openRead('missing/x.jsonl')).rejects.toBeInstanceOf(ObjectNotFoundError);
      await expect(s.openRead('missing/x.jsonl')).rejects.toThrow(/missing\/x\.jsonl/);
      expect(await s.stat('missing/x.jsonl')).toBeUndefined();
      expect(await s.exists('missing/x.jsonl')).toBe(false);
      await s.delete('missing/x.jsonl');
    });

    it('streams a large object in and out byte-identical, invisible until done()', async () => {
      const s = store();
      const sent = createHash('sha256');
      const writer = s.openWrite('big/blob.bin', { contentType: 'application/octet-stream' });
      const chunks = pseudoRandomBytes(bigSize, 3, (chunk) => sent.update(chunk));
      let written = 0;
      for (const chunk of chunks) {
        if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
        written += chunk.length;
        if (written >= bigSize / 2 && written - chunk.length < bigSize / 2) {
          expect(await s.exists('big/blob.bin')).toBe(false);
          expect(await keysOf(s, 'big/')).toEqual([]);
        }
      }
      writer.stream.end();
      const info = await writer.done();
      expect(info).toMatchObject({ key: 'big/blob.bin', size: bigSize });
      expect((await s.stat('big/blob.bin'))?.size).toBe(bigSize);
      expect(await sha256OfStream(await s.openRead('big/blob.bin'))).toBe(sent.digest('hex'));
    });

    it('publishes nothing when a write is aborted mid-stream', async () => {
      const s = store();
      const writer = s.openWrite('aborted/part-00000.jsonl');
      const done = writer.done();
      done.catch(() => {});
      let written = 0;
      for (const chunk of pseudoRandomBytes(bigSize, 5)) {
        if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
        written += chunk.length;
        if (written > bigSize * 0.75) break;
      }
      await writer.abort(new Error('worker shutting down'));
      await expect(done).rejects.toBeInstanceOf(WriteAbortedError);
      expect(await s.exists('aborted/part-00000.jsonl')).toBe(false);
      expect(await keysOf(s, 'aborted/')).toEqual([]);
    });

    it('publishes nothing when the source of writeStream fails', async () => {
      const s = store();
      async function* failing() {
        yield Buffer.alloc(256 * 1024, 1);
        yield Buffer.alloc(256 * 1024, 2);
        throw new Error('download cut short');
      }
      await expect(writeStream(s, 'cut/export.jsonl', failing())).rejects.toThrow(/download cut short/);
      expect(await s.exists('cut/export.jsonl')).toBe(false);
      expect(await keysOf(s, 'cut/')).toEqual([]);
    });

    it('replaces an object and its metadata on overwrite', async () => {
      const s = store();
      await s.writeText('over/x.json', 'first', { metadata: { version: '1' } });
      await writeStream(s, 'over/x.json', Readable.from([Buffer.from('second')]), { metadata: { version: '2' } });
      expect(await s.readText('over/x.json')).toBe('second');
      expect((await s.stat('over/x.json'))?.metadata).toEqual({ version: '2' });
    });

    it('lists by key prefix in key order, with sizes and metadata, keys relative to the store', async () => {
      const s = store();
      await s.writeText('job/parts/part-00001.jsonl', 'bb');
      await s.writeText('job/parts/part-00000.jsonl', 'a', { metadata: { lines: '1' } });
      await s.writeText('job/parts/invalid-00000.jsonl', 'ccc');
      await s.writeText('job/_manifest.json', '{}');
      await s.writeText('jobless.txt', 'x');

      const listed = [];
      for await (const info of s.list('job/parts/part-')) listed.push(info);
      expect(listed).toEqual([
        { key: 'job/parts/part-00000.jsonl', size: 1, metadata: { lines: '1' } },
        { key: 'job/parts/part-00001.jsonl', size: 2, metadata: {} },
      ]);
      expect(await keysOf(s, 'job/')).toEqual([
        'job/_manifest.json',
        'job/parts/invalid-00000.jsonl',
        'job/parts/part-00000.jsonl',
        'job/parts/part-00001.jsonl',
      ]);
      expect(await keysOf(s, 'job')).toHaveLength(5);
      expect(await keysOf(s, 'nothing/')).toEqual([]);

      await s.delete('job/parts/part-00000.jsonl');
      expect(await keysOf(s, 'job/parts/part-')).toEqual(['job/parts/part-00001.jsonl']);
    });

    it('writes empty objects', async () => {
      const s = store();
      const writer = s.openWrite('empty/nothing.jsonl');
      writer.stream.end();
      expect(await writer.done()).toMatchObject({ size: 0 });
      expect((await readAll(await s.openRead('empty/nothing.jsonl'))).length).toBe(0);
    });

    it('rejects keys that would escape the store', async () => {
      const s = store();
      expect(() => s.openWrite('../outside.txt')).toThrow(/not a valid object key/);
      await expect(s.stat('/abs')).rejects.toThrow(/not a valid object key/);
    });
  });
}
