import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { pseudoRandomBytes, sha256OfStream } from './helpers/bytes.ts';
import { useGcsBucket } from './helpers/storage-stack.ts';

describe('dev stack: GCS emulator', () => {
  const bucketName = 'smoke';
  const storage = useGcsBucket(bucketName);

  it('uploads >20 MiB through a resumable createWriteStream and reads it back byte-identical', async () => {
    const size = 21 * 1024 * 1024 + 777;
    const expected = createHash('sha256');
    const file = storage().bucket(bucketName).file('big/blob.bin');
    await pipeline(
      Readable.from(pseudoRandomBytes(size, 11, (chunk) => expected.update(chunk))),
      file.createWriteStream({ resumable: true, validation: 'crc32c' }),
    );

    const [metadata] = await file.getMetadata();
    expect(Number(metadata.size)).toBe(size);
    expect(await sha256OfStream(file.createReadStream())).toBe(expected.digest('hex'));
  });

  it('lists and deletes objects', async () => {
    const bucket = storage().bucket(bucketName);
    await bucket.file('small/a.txt').save('a', { resumable: false });
    const [files] = await bucket.getFiles({ prefix: 'small/' });
    expect(files.map((f) => f.name)).toEqual(['small/a.txt']);
    await bucket.file('small/a.txt').delete();
    const [after] = await bucket.getFiles({ prefix: 'small/' });
    expect(after).toEqual([]);
  });
});
