import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { JsonlLineChecker } from '../../../activities/jobs/line-check.ts';
import { CorruptDownloadError } from '../../../connectors/errors.ts';

async function check(chunks: string[]): Promise<{ lines: number; bytes: number; out: string }> {
  const checker = new JsonlLineChecker();
  let out = '';
  await pipeline(
    Readable.from(chunks.map((c) => Buffer.from(c))),
    checker,
    new Writable({
      write(chunk, _e, cb) {
        out += chunk.toString();
        cb();
      },
    }),
  );
  return { lines: checker.lines, bytes: checker.bytes, out };
}

describe('JsonlLineChecker', () => {
  it('counts lines split anywhere across chunks and passes bytes through unchanged', async () => {
    const text = '{"a":1}\n{"b":[1,2]}\r\n{}\n{"padded":true}      \n';
    for (let cut = 0; cut <= text.length; cut++) {
      const result = await check([text.slice(0, cut), text.slice(cut)]);
      expect(result).toEqual({ lines: 4, bytes: text.length, out: text });
    }
    const single = await check(text.split(''));
    expect(single.lines).toBe(4);
  });

  it('rejects a body cut off mid-line', async () => {
    await expect(check(['{"a":1}\n{"b":'])).rejects.toThrow(CorruptDownloadError);
    await expect(check(['{"a":1}\n{"b":'])).rejects.toThrow(/line 2 .*cut off/);
  });

  it('rejects a line that is not a JSON object', async () => {
    await expect(check(['{"a":1}\n<html>\n'])).rejects.toThrow(/line 2 .*does not start/);
    await expect(check(['{"a":1\n'])).rejects.toThrow(/line 1 .*does not end/);
  });
});
