import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { Store } from '../../connectors/storage/store.ts';
import { type FilePart, openLocalPart, publishFilePart } from '../run/part-files.ts';
import { zeroCounts } from '../run/parts.ts';

/**
 * A night's records (`work/run-<id>/records.jsonl.gz`), one JSON line each in export order: written as the export is
 * read and read back as a stream, so no step holds the whole export.
 */
export interface LinesWriter {
  write(value: unknown): Promise<void>;
  /** Ends the file and publishes it at `key`, as a part of `owner`. */
  publish(store: Store, key: string, owner: string): Promise<FilePart>;
  lines: number;
}

export function openGzipLines(path: string): LinesWriter {
  const file = openLocalPart(path);
  const gzip = createGzip({ level: 3 });
  const flowing = pipeline(gzip, file.stream);
  flowing.catch(() => undefined);
  const writer: LinesWriter = {
    lines: 0,
    async write(value) {
      writer.lines += 1;
      await writeOrWait(gzip, `${JSON.stringify(value)}\n`);
    },
    async publish(store, key, owner) {
      gzip.end();
      await flowing;
      const proof = await file.finish();
      const counts = { ...zeroCounts(), lines: writer.lines };
      return publishFilePart(
        store,
        key,
        { path, ...proof },
        {
          contentType: 'application/gzip',
          counts,
          identity: { owner, options: '', index: 0 },
        },
      );
    },
  };
  return writer;
}

export async function writeOrWait(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once('drain', resolve));
}

/** The lines of a gzipped JSONL object, parsed, one at a time. */
export async function* readGzipLines<T>(store: Store, key: string): AsyncGenerator<T> {
  const source = createGunzip();
  pipeline(await store.openRead(key), source).catch((error: unknown) => source.destroy(error as Error));
  for await (const line of createInterface({ input: source, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line !== '') yield JSON.parse(line) as T;
  }
}
