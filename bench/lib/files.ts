import { createReadStream } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';

/** Newlines in a file (gunzipped first when it ends in .gz), streamed. */
export async function countLines(path: string): Promise<number> {
  let count = 0;
  const source = createReadStream(path, { highWaterMark: 1024 * 1024 });
  const stream = path.endsWith('.gz') ? source.pipe(createGunzip()) : source;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let at = chunk.indexOf(10);
    while (at !== -1) {
      count += 1;
      at = chunk.indexOf(10, at + 1);
    }
  }
  return count;
}

/** Lines of every file in a directory whose name matches. */
export async function countLinesIn(dir: string, match: RegExp): Promise<{ files: number; lines: number }> {
  const names = (await readdir(dir)).filter((name) => match.test(name));
  let lines = 0;
  for (const name of names) lines += await countLines(join(dir, name));
  return { files: names.length, lines };
}

/** A CSV of `count` distinct company domains (header `domain`), the same for a given count and prefix. */
export async function writeDomainsCsv(path: string, count: number, prefix = 'bench'): Promise<void> {
  const words = ['acme', 'globex', 'initech', 'umbrella', 'stark', 'wayne', 'hooli', 'vandelay', 'soylent', 'tyrell'];
  const lines = ['domain'];
  for (let i = 0; i < count; i++) lines.push(`${words[i % words.length]}-${prefix}-${i}.com`);
  await writeFile(path, `${lines.join('\n')}\n`);
}

/** A CSV of `count` distinct contacts (header `Email`, as CRM contact exports name it), the same for a given count. */
export async function writeContactsCsv(path: string, count: number, prefix = 'bench'): Promise<void> {
  const words = ['acme', 'globex', 'initech', 'umbrella', 'stark', 'wayne', 'hooli', 'vandelay', 'soylent', 'tyrell'];
  const lines = ['Email'];
  for (let i = 0; i < count; i++) lines.push(`person.${i}@${words[i % words.length]}-${prefix}-${i % 97}.com`);
  await writeFile(path, `${lines.join('\n')}\n`);
}
