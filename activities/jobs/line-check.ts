import type { Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { CorruptDownloadError } from '../../connectors/errors.ts';

const NEWLINE = 0x0a;
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/**
 * Passes bytes through unchanged while counting JSONL lines and checking that each is one JSON object
 * (`{…}`). Cheap enough for multi-GiB files: it scans for newlines and never parses or copies whole lines.
 */
export class JsonlLineChecker extends Transform {
  lines = 0;
  bytes = 0;
  /** Also fed every byte that passes, when the bytes are stored as they are (one pass instead of two streams). */
  private readonly hash: Hash | undefined;

  constructor(options: { hash?: Hash } = {}) {
    super();
    this.hash = options.hash;
  }
  private lineStart = true;
  /** The last byte of the current line that is not a space, tab or CR (JSON allows trailing whitespace). */
  private lastSignificant = -1;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    let position = 0;
    while (position < chunk.length) {
      if (this.lineStart) {
        if (chunk[position] !== OPEN) {
          callback(this.corrupt('does not start with "{"'));
          return;
        }
        this.lineStart = false;
      }
      const newline = chunk.indexOf(NEWLINE, position);
      if (newline === -1) {
        this.remember(chunk, position, chunk.length);
        break;
      }
      this.remember(chunk, position, newline);
      if (this.lastSignificant !== CLOSE) {
        callback(this.corrupt('does not end with "}"'));
        return;
      }
      this.lines += 1;
      this.lineStart = true;
      this.lastSignificant = -1;
      position = newline + 1;
    }
    this.hash?.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.lineStart ? null : this.corrupt('is cut off (no final newline)'));
  }

  private remember(chunk: Buffer, from: number, to: number): void {
    for (let index = to - 1; index >= from; index--) {
      if (!isBlank(chunk[index])) {
        this.lastSignificant = chunk[index] ?? -1;
        return;
      }
    }
  }

  private corrupt(what: string): CorruptDownloadError {
    return new CorruptDownloadError(`line ${this.lines + 1} of the download ${what}`);
  }
}
