/**
 * An `.xlsx` workbook's zip, opened so that it cannot exhaust the worker: its stored bytes are copied to a private file
 * (0600, in a 0700 folder of its own under TMPDIR, removed on close whatever happened), its central directory is read
 * and its inflated sizes capped BEFORE any entry is inflated, and each entry is held to the size the directory gives
 * as it inflates (a directory that lies about a size is refused when the entry passes it). Nothing else is written:
 * the sheets are read from the private file, never spooled.
 */
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../../connectors/errors.ts';

const MiB = 2 ** 20;

/** The largest workbook read, as stored. */
export const MAX_XLSX_BYTES = 256 * MiB;
/** A workbook inflates to at most this many times its stored size (as `load` caps a part), and at least… */
export const XLSX_INFLATE_RATIO = 64;
/** …this much whatever its stored size (a small workbook of long, repetitive rows inflates far). */
export const XLSX_MIN_INFLATED_BYTES = 64 * MiB;
/** The shared strings are held in memory while the sheet is read: they inflate to at most this. */
export const MAX_SHARED_STRINGS_BYTES = 256 * MiB;

interface ZipEntry {
  path: string;
  uncompressedSize: number;
  stream(): Readable;
}

/** A random-access source, as unzipper's central directory reader takes it. */
interface ZipSource {
  stream(offset: number, length?: number): Readable;
  size(): Promise<number>;
}

// unzipper (exceljs's zip reader) reads a central directory from any random-access source; its `Open.file` opens
// streams it never closes, so the source here is the kit's own and closes every stream it opened.
const readDirectory = createRequire(import.meta.url)('unzipper/lib/Open/directory.js') as (
  source: ZipSource,
) => Promise<{ files: ZipEntry[] }>;

export interface WorkbookZip {
  /** An entry's inflated bytes, held to its directory's size; undefined when the workbook has no such entry. */
  entry(path: string): Readable | undefined;
  /** The numbers of the workbook's sheets (`xl/worksheets/sheet<N>.xml`), in order. */
  sheetNumbers(): string[];
  /** Closes every stream and removes the private copy. */
  close(): Promise<void>;
}

/** Copies `body` to `path`, refused once it passes `MAX_XLSX_BYTES`. */
async function copyCapped(body: Readable, path: string, url: string): Promise<void> {
  let stored = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      stored += chunk.length;
      if (stored > MAX_XLSX_BYTES) {
        callback(
          new InputError(
            `input ${url}: the workbook is larger than ${MAX_XLSX_BYTES / MiB} MiB; save the sheet as CSV (or .csv.gz)`,
          ),
        );
      } else callback(null, chunk);
    },
  });
  await pipeline(body, cap, createWriteStream(path, { mode: 0o600, flags: 'wx' }));
}

/** The directory's sizes against the caps, before anything is inflated. */
function checkSizes(url: string, stored: number, files: ZipEntry[]): void {
  const allowed = Math.max(XLSX_MIN_INFLATED_BYTES, XLSX_INFLATE_RATIO * stored);
  const total = files.reduce((sum, file) => sum + file.uncompressedSize, 0);
  const mib = (bytes: number) => `${Math.ceil(bytes / MiB)} MiB`;
  if (total > allowed) {
    throw new InputError(
      `input ${url}: the workbook inflates to ${mib(total)}, past the ${mib(allowed)} a workbook of ${mib(stored)} ` +
        `may inflate to (${XLSX_INFLATE_RATIO} × its size, at least ${mib(XLSX_MIN_INFLATED_BYTES)}); nothing was read`,
    );
  }
  const strings = files.find((file) => file.path === 'xl/sharedStrings.xml');
  if (strings && strings.uncompressedSize > MAX_SHARED_STRINGS_BYTES) {
    throw new InputError(
      `input ${url}: the workbook's shared strings inflate to ${mib(strings.uncompressedSize)}, past ` +
        `${mib(MAX_SHARED_STRINGS_BYTES)}; save the sheet as CSV (or .csv.gz); nothing was read`,
    );
  }
}

/** `source` inflated, failing once it passes `size` bytes (what the directory said). */
function heldTo(source: Readable, size: number, url: string, path: string): Readable {
  let inflated = 0;
  const held = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inflated += chunk.length;
      if (inflated > size) {
        callback(
          new InputError(
            `input ${url}: the workbook's entry ${path} inflates past the ${size} bytes its zip directory gives; ` +
              'it is not a workbook as Excel writes one',
          ),
        );
      } else callback(null, chunk);
    },
  });
  source.on('error', (error) => held.destroy(error));
  held.on('close', () => source.destroy());
  return source.pipe(held);
}

/** The workbook `body` (an `.xlsx` as stored), opened for reading within the caps above. */
export async function openWorkbookZip(body: Readable, url: string): Promise<WorkbookZip> {
  const dir = await mkdtemp(join(tmpdir(), 'signal-kit-xlsx-'));
  const opened = new Set<ReadStream>();
  const close = async () => {
    for (const stream of opened) stream.destroy();
    opened.clear();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const path = join(dir, 'workbook.xlsx');
    await copyCapped(body, path, url);
    const stored = (await stat(path)).size;
    const source: ZipSource = {
      stream(offset, length) {
        const stream = createReadStream(path, {
          start: offset,
          ...(length !== undefined ? { end: offset + length } : {}),
        });
        opened.add(stream);
        stream.once('close', () => opened.delete(stream));
        return stream;
      },
      size: async () => stored,
    };
    let files: ZipEntry[];
    try {
      files = (await readDirectory(source)).files;
    } catch (error) {
      throw new InputError(`input ${url}: not a readable .xlsx workbook (${(error as Error).message})`, {
        cause: error,
      });
    }
    checkSizes(url, stored, files);
    const byPath = new Map(files.map((file) => [file.path, file]));
    return {
      entry(entryPath) {
        const file = byPath.get(entryPath);
        return file && heldTo(file.stream(), file.uncompressedSize, url, entryPath);
      },
      sheetNumbers: () =>
        files
          .map((file) => /^xl\/worksheets\/sheet(\d+)\.xml$/.exec(file.path)?.[1])
          .filter((n): n is string => n !== undefined)
          .sort((a, b) => Number(a) - Number(b)),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
