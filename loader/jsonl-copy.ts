/**
 * A flat table's JSONL part turned into COPY text without parsing it into objects: most of `load`'s own CPU went into
 * `JSON.parse` and re-encoding each value (about 9 µs a signal, as much as the server's whole COPY). The parts are
 * written by the kit's own encoder (activities/tables/encode.ts): one object a line, every column's key in the table's
 * order, values null, numbers, strings, or arrays of strings. A JSON string's escapes are almost COPY's own (`\\`,
 * `\n`, `\r`, `\t`), so a string is copied byte by byte, only `\"`, `\/`, `\b`, `\f` and `\uXXXX` rewritten; any
 * other value is copied with its backslashes doubled. A line of any other shape makes the whole part fall back to
 * the parsing path (undefined).
 */

import type { NulCount } from '../connectors/postgres/index.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;
const TAB = 0x09;

export interface JsonlCopyColumns {
  /** The table's columns in the part's key order. */
  names: readonly string[];
  /** Which of them are jsonb (their text is JSON, whose `\u0000` PostgreSQL refuses). */
  json?: readonly boolean[];
  /** Bytes appended to every line (the columns load adds, already COPY text, each after a tab). */
  suffix: Buffer;
}

const hex = (byte: number) =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x61 && byte <= 0x66
      ? byte - 0x57
      : byte >= 0x41 && byte <= 0x46
        ? byte - 0x37
        : -1;

/** Writes a code point as COPY text (UTF-8, with COPY's escapes for backslash, newline, return and tab). */
function writeCodePoint(out: Buffer, at: number, cp: number): number {
  let o = at;
  if (cp === 0x5c) {
    out[o++] = BACKSLASH;
    out[o++] = BACKSLASH;
  } else if (cp === 0x0a || cp === 0x0d || cp === 0x09) {
    out[o++] = BACKSLASH;
    out[o++] = cp === 0x0a ? 0x6e : cp === 0x0d ? 0x72 : 0x74;
  } else if (cp < 0x80) out[o++] = cp;
  else if (cp < 0x800) {
    out[o++] = 0xc0 | (cp >> 6);
    out[o++] = 0x80 | (cp & 0x3f);
  } else if (cp < 0x10000) {
    out[o++] = 0xe0 | (cp >> 12);
    out[o++] = 0x80 | ((cp >> 6) & 0x3f);
    out[o++] = 0x80 | (cp & 0x3f);
  } else {
    out[o++] = 0xf0 | (cp >> 18);
    out[o++] = 0x80 | ((cp >> 12) & 0x3f);
    out[o++] = 0x80 | ((cp >> 6) & 0x3f);
    out[o++] = 0x80 | (cp & 0x3f);
  }
  return o;
}

/** The code point of `\uXXXX` at `at`, or -1. */
function unicodeEscape(input: Buffer, at: number): number {
  if (at + 6 > input.length || input[at] !== BACKSLASH || input[at + 1] !== 0x75) return -1;
  let cp = 0;
  for (let k = 2; k < 6; k++) {
    const digit = hex(input[at + k] as number);
    if (digit < 0) return -1;
    cp = cp * 16 + digit;
  }
  return cp;
}

/** Whether `u0000` starts at `at`. */
function isNulEscape(input: Buffer, at: number): boolean {
  return (
    input[at] === 0x75 &&
    input[at + 1] === 0x30 &&
    input[at + 2] === 0x30 &&
    input[at + 3] === 0x30 &&
    input[at + 4] === 0x30
  );
}

const UFFFD = Buffer.from('ufffd');

/** `convert` ran out of room in `out` (a typed array drops writes past its end: every line's end checks). */
const OVERFLOW = -2;
/** `convert` met a line of another shape. */
const OTHER_SHAPE = -1;

/** The COPY text of whole JSONL lines (a slice of a part), or undefined when a line is not of the expected shape. */
export function jsonlToCopyText(input: Buffer, columns: JsonlCopyColumns, count?: NulCount): Buffer | undefined {
  let lines = 1;
  for (let at = input.indexOf(NEWLINE); at !== -1; at = input.indexOf(NEWLINE, at + 1)) lines++;
  // A line's COPY text is shorter than its JSON (each key becomes a tab, `null` becomes `\N`), but for backslashes in
  // arrays and objects, which double: the input's size and the suffixes are room enough but for lines full of them,
  // which are converted again with room for the worst case. Half the allocation is half the collector's work.
  const suffixes = lines * (columns.suffix.length + 1);
  let out = Buffer.allocUnsafe(input.length + suffixes);
  const nul = { nul: 0 };
  let o = convert(input, columns, out, nul);
  if (o === OVERFLOW) {
    out = Buffer.allocUnsafe(input.length * 2 + lines * (columns.suffix.length + 2 * columns.names.length + 2));
    nul.nul = 0;
    o = convert(input, columns, out, nul);
  }
  if (o < 0) return undefined;
  if (count) count.nul += nul.nul;
  return out.subarray(0, o);
}

/** Where `convert` is: the next byte of the input to read, the next byte of `out` to write. */
interface Cursor {
  p: number;
  o: number;
}

/**
 * Converts `input` into `out`: the bytes written, or OVERFLOW, or OTHER_SHAPE. Each line is the table's keys in
 * order, each followed by one value (`copyValue`), then the line's suffix.
 */
function convert(input: Buffer, columns: JsonlCopyColumns, out: Buffer, count: NulCount): number {
  const keys = columns.names.map((name, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`));
  const suffix = columns.suffix;
  const end = input.length;
  const at: Cursor = { p: 0, o: 0 };
  while (at.p < end) {
    if (input[at.p] === NEWLINE) {
      at.p++;
      continue;
    }
    for (let c = 0; c < keys.length; c++) {
      if (!skipKey(input, at, keys[c] as Buffer)) return OTHER_SHAPE;
      if (c > 0) out[at.o++] = TAB;
      if (!copyValue(input, out, at, columns.json?.[c] === true, count)) return OTHER_SHAPE;
    }
    if (input[at.p] !== CLOSE_BRACE) return OTHER_SHAPE;
    at.p++;
    if (at.p < end && input[at.p] !== NEWLINE) return OTHER_SHAPE;
    if (at.o + suffix.length + 1 > out.length) return OVERFLOW;
    at.o += suffix.copy(out, at.o);
    out[at.o++] = NEWLINE;
  }
  return at.o;
}

/** Passes the key (with its `{` or `,` before and `:` after) when it is the next thing in the input. */
function skipKey(input: Buffer, at: Cursor, key: Buffer): boolean {
  const p = at.p;
  if (p + key.length > input.length) return false;
  for (let k = 0; k < key.length; k++) if (input[p + k] !== key[k]) return false;
  at.p = p + key.length;
  return true;
}

/** One value as COPY text: null as `\N`, a string's text, any other value as its JSON text. */
function copyValue(input: Buffer, out: Buffer, at: Cursor, json: boolean, count: NulCount): boolean {
  const first = input[at.p];
  if (first === 0x6e) {
    const p = at.p;
    if (input[p + 1] !== 0x75 || input[p + 2] !== 0x6c || input[p + 3] !== 0x6c) return false;
    out[at.o++] = BACKSLASH;
    out[at.o++] = 0x4e;
    at.p = p + 4;
    return true;
  }
  if (first === QUOTE) return copyString(input, out, at, json, count);
  return copyJsonValue(input, out, at, count);
}

/** A string: its bytes as they are, its escapes rewritten where COPY's differ. */
function copyString(input: Buffer, out: Buffer, at: Cursor, json: boolean, count: NulCount): boolean {
  // Plain locals and no closures in the loop below: it runs once per byte of every part.
  const end = input.length;
  let p = at.p + 1;
  let o = at.o;
  while (p < end) {
    const byte = input[p] as number;
    if (byte === QUOTE) {
      at.p = p + 1;
      at.o = o;
      return true;
    }
    if (byte !== BACKSLASH) {
      out[o++] = byte;
      p++;
      continue;
    }
    const next = input[p + 1];
    // A jsonb column's text holding the escape `\u0000` (a NUL PostgreSQL refuses): the parsing way replaces it.
    if (json && next === BACKSLASH && isNulEscape(input, p + 2)) return false;
    if (next === BACKSLASH || next === 0x6e || next === 0x72 || next === 0x74) {
      out[o++] = BACKSLASH;
      out[o++] = next;
      p += 2;
    } else if (next === QUOTE || next === 0x2f) {
      out[o++] = next;
      p += 2;
    } else if (next === 0x62 || next === 0x66) {
      // Backspace and form feed: COPY takes them as they are.
      out[o++] = next === 0x62 ? 0x08 : 0x0c;
      p += 2;
    } else if (next === 0x75) {
      const cp = escapedCodePoint(input, p, count);
      if (cp.value < 0) return false;
      p = cp.next;
      o = writeCodePoint(out, o, cp.value);
    } else return false;
  }
  return false;
}

/**
 * The code point of the `\uXXXX` escape at `p` (a surrogate pair's two escapes together) and where the input goes on;
 * -1 when it is no escape. A lone surrogate becomes U+FFFD, as Node's UTF-8 encoding of the parsed string would make
 * it; NUL, which PostgreSQL cannot hold in text, becomes its stand-in (copy-text.ts), counted.
 */
function escapedCodePoint(input: Buffer, p: number, count: NulCount): { value: number; next: number } {
  let cp = unicodeEscape(input, p);
  if (cp < 0) return { value: -1, next: p };
  let next = p + 6;
  if (cp >= 0xd800 && cp <= 0xdbff) {
    const low = unicodeEscape(input, next);
    if (low >= 0xdc00 && low <= 0xdfff) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      next += 6;
    } else cp = 0xfffd;
  } else if (cp >= 0xdc00 && cp <= 0xdfff) cp = 0xfffd;
  else if (cp === 0) {
    cp = 0xfffd;
    count.nul += 1;
  }
  return { value: cp, next };
}

/**
 * Any other value (number, array, object, true, false) up to the next `,` or `}` at its own depth, as JSON text with
 * its backslashes doubled.
 */
function copyJsonValue(input: Buffer, out: Buffer, at: Cursor, count: NulCount): boolean {
  // Plain locals and no closures in the loop below: it runs once per byte of every part.
  const end = input.length;
  let p = at.p;
  let o = at.o;
  let depth = 0;
  let inString = false;
  while (p < end) {
    const byte = input[p] as number;
    if (inString) {
      if (byte === BACKSLASH) {
        out[o++] = BACKSLASH;
        out[o++] = BACKSLASH;
        if (isNulEscape(input, p + 1)) {
          // `\u0000` inside an array or object: jsonb refuses it; its stand-in's escape, counted.
          for (const b of UFFFD) out[o++] = b;
          count.nul += 1;
          p += 6;
          continue;
        }
        const escaped = input[p + 1] as number;
        if (escaped === BACKSLASH) {
          out[o++] = BACKSLASH;
          out[o++] = BACKSLASH;
        } else out[o++] = escaped;
        p += 2;
        continue;
      }
      if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === 0x5b || byte === OPEN_BRACE) depth++;
    else if (byte === 0x5d || byte === CLOSE_BRACE) {
      if (depth === 0) break;
      depth--;
    } else if (byte === COMMA && depth === 0) break;
    else if (byte === NEWLINE || byte === TAB) return false;
    out[o++] = byte;
    p++;
  }
  if (p >= end) return false;
  at.p = p;
  at.o = o;
  return true;
}
