import { createHash } from 'node:crypto';
import type { Store } from '../storage/store.ts';

/** A CSV file written: its key, data lines, bytes and sha256 (what a manifest lists of it). */
export interface CsvFileWritten {
  key: string;
  lines: number;
  bytes: number;
  sha256: string;
}

/**
 * Writes a CRM import file as a stream: the header line, then each line, CRLF-terminated as CRMs' importers expect,
 * in 64 KiB chunks, hashing as it goes. `lines` are already encoded CSV lines without their line end.
 */
export async function writeCsvFile(
  store: Store,
  key: string,
  headerLine: string | undefined,
  lines: AsyncIterable<string> | Iterable<string>,
): Promise<CsvFileWritten> {
  const writer = store.openWrite(key, { contentType: 'text/csv; charset=utf-8' });
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  let pending = '';
  const write = async (text: string, flush = false) => {
    pending += text;
    if (pending.length < 64 * 1024 && !flush) return;
    const chunk = Buffer.from(pending, 'utf8');
    pending = '';
    hash.update(chunk);
    bytes += chunk.length;
    if (!writer.stream.write(chunk)) await new Promise((resolve) => writer.stream.once('drain', resolve));
  };
  try {
    if (headerLine !== undefined) await write(`${headerLine}\r\n`);
    for await (const text of lines) {
      await write(`${text}\r\n`);
      count += 1;
    }
    await write('', true);
    writer.stream.end();
    await writer.done();
  } catch (error) {
    await writer.abort(error);
    throw error;
  }
  return { key, lines: count, bytes, sha256: hash.digest('hex') };
}
