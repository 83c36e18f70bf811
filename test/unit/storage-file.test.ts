import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../config/storage.ts';
import {
  FileStore,
  InvalidStorageUrlError,
  ObjectNotFoundError,
  parseStorageUrl,
  WriteAbortedError,
} from '../../connectors/storage/index.ts';
import { describeStoreContract } from '../helpers/store-contract.ts';
import { useFreshDirs } from '../helpers/temp-dir.ts';

const freshDir = useFreshDirs('signal-kit-file-store', 'store');

/** Every file under `dir`, hidden ones included. */
function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

describeStoreContract('file://', () => openStore(pathToFileURL(freshDir()).href));

describe('FileStore', () => {
  it('opens plain paths as file stores', () => {
    const dir = freshDir();
    const store = openStore(dir);
    expect(store).toBeInstanceOf(FileStore);
    expect(store.url).toBe(pathToFileURL(dir).href);
  });

  it('leaves no temporary file behind after an aborted write, and only the object and its metadata after a write', async () => {
    const dir = freshDir();
    const store = openStore(dir);
    const aborted = store.openWrite('p/part-00000.jsonl');
    aborted.stream.write('{"a":1}\n');
    await aborted.abort();
    await expect(aborted.done()).rejects.toBeInstanceOf(WriteAbortedError);
    expect(allFiles(dir)).toEqual([]);

    await store.writeText('p/part-00000.jsonl', '{"a":1}\n', { metadata: { lines: '1' } });
    expect(allFiles(dir)).toEqual(['p/.part-00000.jsonl.sk-meta.json', 'p/part-00000.jsonl']);
    await store.delete('p/part-00000.jsonl');
    expect(allFiles(dir)).toEqual([]);
  });

  it('writes through a temporary name in the same directory, renamed on done()', async () => {
    const dir = freshDir();
    const store = openStore(dir);
    const writer = store.openWrite('x/y.jsonl');
    writer.stream.end('{"b":2}\n');
    await new Promise((resolve) => writer.stream.once('finish', resolve));
    expect(allFiles(dir)).toEqual([expect.stringMatching(/^x\/\.y\.jsonl\.sk-tmp-[0-9a-f]+$/)]);
    await writer.done();
    expect(allFiles(dir)).toEqual(['x/y.jsonl']);
  });

  it('publishes a body in one step with its metadata, and again after its directory was removed behind its back', async () => {
    const dir = freshDir();
    const store = openStore(dir) as FileStore;
    const info = await store.writeBytes('j/parts/part-00000.jsonl', Buffer.from('{"a":"é"}\n'), {
      metadata: { lines: '1' },
    });
    expect(info).toEqual({ key: 'j/parts/part-00000.jsonl', size: 11, metadata: { lines: '1' } });
    expect(allFiles(dir)).toEqual(['j/parts/.part-00000.jsonl.sk-meta.json', 'j/parts/part-00000.jsonl']);
    expect(await store.stat('j/parts/part-00000.jsonl')).toEqual(info);

    rmSync(join(dir, 'j'), { recursive: true });
    await store.writeText('j/parts/part-00001.jsonl', '{"b":2}\n');
    expect(allFiles(dir)).toEqual(['j/parts/part-00001.jsonl']);
    expect(await store.readText('j/parts/part-00001.jsonl')).toBe('{"b":2}\n');
  });

  it('reads a missing key or a directory as not found', async () => {
    const store = openStore(freshDir());
    await store.writeText('d/x.json', '{}');
    await expect(store.readText('d/missing.json')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.readText('d')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });
});

describe('parseStorageUrl', () => {
  it('parses the three schemes and normalizes prefixes', () => {
    expect(parseStorageUrl('s3://my-bucket')).toEqual({
      scheme: 's3',
      url: 's3://my-bucket',
      bucket: 'my-bucket',
      prefix: '',
    });
    expect(parseStorageUrl('s3://my-bucket/out//jobs/')).toEqual({
      scheme: 's3',
      url: 's3://my-bucket/out/jobs',
      bucket: 'my-bucket',
      prefix: 'out/jobs/',
    });
    expect(parseStorageUrl('gs://b.example/x')).toMatchObject({ scheme: 'gs', bucket: 'b.example', prefix: 'x/' });
    expect(parseStorageUrl('file:///tmp/out/')).toMatchObject({
      scheme: 'file',
      dir: '/tmp/out',
      url: 'file:///tmp/out',
    });
    expect(parseStorageUrl('./out')).toMatchObject({ scheme: 'file', dir: join(process.cwd(), 'out') });
  });

  it('rejects unknown schemes and bad bucket names with a clear error', () => {
    expect(() => parseStorageUrl('ftp://host/x')).toThrow(InvalidStorageUrlError);
    expect(() => parseStorageUrl('ftp://host/x')).toThrow(/unsupported scheme "ftp:"/);
    expect(() => parseStorageUrl('s3://Bad_Bucket/x')).toThrow(/not a valid bucket name/);
    expect(() => parseStorageUrl('gs:///x')).toThrow(/not a valid bucket name/);
  });
});
