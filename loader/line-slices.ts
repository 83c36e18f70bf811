/**
 * A stream of bytes cut into slices of whole lines, each about `sliceBytes` (longer only by a line that is), so that a
 * part's lines are converted a slice at a time and never held whole.
 */

const NEWLINE = 0x0a;

/** Slices of `chunks` that each end with a newline (the last one with the input's end). */
export async function* lineSlices(chunks: AsyncIterable<Buffer>, sliceBytes: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    pending.push(chunk);
    size += chunk.length;
    if (size < sliceBytes) continue;
    const cut = chunk.lastIndexOf(NEWLINE);
    // No line ends in this chunk: a long line, read on until one does.
    if (cut < 0) continue;
    const rest = chunk.subarray(cut + 1);
    pending[pending.length - 1] = chunk.subarray(0, cut + 1);
    yield Buffer.concat(pending);
    pending = rest.length > 0 ? [rest] : [];
    size = rest.length;
  }
  if (size > 0) yield Buffer.concat(pending);
}

/** A slice's lines, blank ones left out. */
export const sliceLines = (slice: Buffer): string[] =>
  slice
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
