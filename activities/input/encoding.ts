/**
 * The text encoding of a user's file, decided as the tools that write CRM exports write them, and the file turned
 * into UTF-8 as it streams:
 * - a byte order mark says it: UTF-8 (`EF BB BF`), UTF-16 LE (`FF FE`, Excel's "Unicode Text") or BE (`FE FF`);
 * - else UTF-8 while the bytes are UTF-8;
 * - else Windows-1252 (what Excel on Windows saves as "CSV (Comma delimited)"), when every byte before the first one
 *   that is not UTF-8 was plain ASCII (the same in both, so nothing read so far changes);
 * - a file that is neither (UTF-8 text and then a byte that is not, or a byte that Windows-1252 does not define)
 *   cannot be decided: an `InputError` names its row and byte, and `--encoding` says what it is;
 * - a file without a byte order mark whose first bytes hold a NUL at every other byte is UTF-16 (Excel's "Unicode
 *   Text" saved without its mark, a PowerShell `Out-File`): refused by name, with the `--encoding` that reads it,
 *   rather than read as text whose header is `I\0d\0`.
 * A NUL is never a file's verdict otherwise: it passes through decoding, and the row that holds it in a column the
 * kit reads is an invalid record (read-input.ts), in every encoding.
 */
import { InputError } from '../../connectors/errors.ts';

export const INPUT_ENCODINGS = ['auto', 'utf-8', 'utf-16le', 'utf-16be', 'windows-1252'] as const;
export type InputEncoding = (typeof INPUT_ENCODINGS)[number];

/** Bytes Windows-1252 leaves undefined: a file holding them is not Windows-1252 text. */
const NOT_1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/** How many of a file's first bytes are looked at for UTF-16 without a byte order mark. */
const UTF16_SNIFF_BYTES = 1024;

/**
 * UTF-16 without a byte order mark, from its first bytes: text in a Latin script holds a NUL in (nearly) every pair,
 * always on the same side, which no UTF-8 or Windows-1252 text does.
 */
export function utf16WithoutBom(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const pairs = Math.floor(Math.min(bytes.length, UTF16_SNIFF_BYTES) / 2);
  if (pairs < 2) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < pairs; i++) {
    if (bytes[2 * i] === 0) even += 1;
    if (bytes[2 * i + 1] === 0) odd += 1;
  }
  if (odd >= pairs * 0.6 && even <= pairs * 0.05) return 'utf-16le';
  if (even >= pairs * 0.6 && odd <= pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** How many bytes at the end of `bytes` begin a UTF-8 sequence that the next chunk completes (0 to 3). */
function openSequence(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/** Where a byte lies, for messages: its offset in the file and the line it is on (the header is line 1). */
class Position {
  offset = 0;
  line = 1;
  advance(bytes: Uint8Array): void {
    for (const byte of bytes) if (byte === 0x0a) this.line += 1;
    this.offset += bytes.length;
  }
  describe(bytes: Uint8Array, at: number): string {
    let line = this.line;
    for (let i = 0; i < at; i++) if (bytes[i] === 0x0a) line += 1;
    const row = line - 1;
    return `${row >= 1 ? `row ${row} (line ${line})` : 'the header (line 1)'}, byte ${this.offset + at}`;
  }
}

function undecidable(url: string, where: string, why: string): InputError {
  return new InputError(
    `input ${url}: ${where} ${why}, so its encoding cannot be told; save it as UTF-8, or say what it is with ` +
      `--encoding (${INPUT_ENCODINGS.filter((e) => e !== 'auto').join(', ')})`,
  );
}

/** The first byte of `bytes` that is not part of valid UTF-8 (whole sequences only), or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const valid = (length: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, length));
      return true;
    } catch {
      return false;
    }
  };
  if (valid(bytes.length)) return -1;
  // Narrow down: the longest prefix that is whole, valid UTF-8 (a prefix may cut a sequence: step back over it).
  let low = 0;
  let high = bytes.length;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    const cut = mid - openSequence(bytes.subarray(0, mid));
    if (valid(cut)) low = mid;
    else high = mid - 1;
  }
  return low - openSequence(bytes.subarray(0, low));
}

/**
 * The file as UTF-8 bytes (byte order mark removed), decoded from `encoding`, or from what `auto` finds. Streams: only
 * a few bytes of an open sequence are held between chunks.
 */
export async function* decodeToUtf8(
  body: AsyncIterable<Buffer | string>,
  url: string,
  encoding: InputEncoding = 'auto',
): AsyncGenerator<Buffer> {
  const position = new Position();
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  let mode: InputEncoding = encoding;
  let sawMultibyte = false;
  let held: Uint8Array = new Uint8Array(0);
  let first = true;
  for await (const piece of body) {
    let chunk: Uint8Array = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (held.length > 0) {
      chunk = Buffer.concat([held, chunk]);
      held = new Uint8Array(0);
    }
    if (first) {
      if (chunk.length < 3 && mode === 'auto') {
        held = chunk; // too short to see a byte order mark: wait for more
        continue;
      }
      first = false;
      if (mode === 'auto') {
        if (chunk[0] === 0xff && chunk[1] === 0xfe) mode = 'utf-16le';
        else if (chunk[0] === 0xfe && chunk[1] === 0xff) mode = 'utf-16be';
      }
      if (mode === 'auto' || mode === 'utf-8' || mode === 'windows-1252') {
        const utf16 = utf16WithoutBom(chunk);
        if (utf16) {
          throw new InputError(
            `input ${url}: is UTF-16 text without a byte order mark (a NUL at every other byte, ` +
              `${utf16 === 'utf-16le' ? 'little' : 'big'} endian); read it with --encoding ${utf16}, or save it as UTF-8`,
          );
        }
      }
      if (mode === 'utf-16le' || mode === 'utf-16be' || mode === 'windows-1252') {
        decoder = new TextDecoder(mode);
      }
    }
    if (decoder) {
      const text = decoder.decode(chunk, { stream: true });
      if (mode === 'windows-1252') {
        const bad = chunk.findIndex((byte) => NOT_1252.has(byte));
        if (bad >= 0)
          throw undecidable(url, position.describe(chunk, bad), 'holds a byte Windows-1252 does not define');
      }
      position.advance(chunk);
      if (text) yield Buffer.from(text, 'utf8');
      continue;
    }
    // UTF-8 (said, or so far): checked, passed on as it is.
    const open = openSequence(chunk);
    const whole = chunk.subarray(0, chunk.length - open);
    const bad = firstInvalidUtf8(whole);
    if (bad < 0) {
      if (!sawMultibyte && whole.some((byte) => byte >= 0x80)) sawMultibyte = true;
      position.advance(whole);
      held = chunk.subarray(chunk.length - open);
      if (whole.length > 0) yield Buffer.from(whole);
      continue;
    }
    const before = whole.subarray(0, bad);
    if (mode === 'utf-8' || sawMultibyte || before.some((byte) => byte >= 0x80)) {
      throw undecidable(
        url,
        position.describe(whole, bad),
        mode === 'utf-8' ? 'is not UTF-8' : 'is UTF-8 up to a byte that is not',
      );
    }
    // Plain ASCII until here: the file is Windows-1252 from its start.
    mode = 'windows-1252';
    decoder = new TextDecoder('windows-1252');
    const unknown = chunk.findIndex((byte) => NOT_1252.has(byte));
    if (unknown >= 0)
      throw undecidable(url, position.describe(chunk, unknown), 'is neither UTF-8 nor Windows-1252 text');
    position.advance(chunk);
    const text = decoder.decode(chunk, { stream: true });
    if (text) yield Buffer.from(text, 'utf8');
  }
  if (held.length > 0) {
    if (decoder) {
      const text = decoder.decode(held);
      if (text) yield Buffer.from(text, 'utf8');
    } else if (first) {
      yield Buffer.from(held); // a file of one or two bytes
    } else {
      throw undecidable(url, position.describe(held, 0), 'ends inside a UTF-8 sequence');
    }
  }
  if (decoder) {
    const rest = decoder.decode();
    if (rest) yield Buffer.from(rest, 'utf8');
  }
}
