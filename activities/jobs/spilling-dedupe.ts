import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';

export interface SpillingDedupeOptions {
  /** Distinct values kept in memory before the rest is sorted out on disk. */
  memoryLimit?: number;
  /** Bucket files on disk; one bucket is in memory at a time. */
  buckets?: number;
  /** Where the bucket files go (a fresh directory below it, removed by `close`). */
  tmpDir?: string;
}

/** Over this many distinct values a job's dedup spills to disk: about 10 MiB of Set for typical addresses. */
export const SPILLING_DEDUPE_MEMORY_LIMIT = 100_000;
const BUCKETS = 64;

/**
 * The first occurrence of each value, in input order, with memory that does not grow with the input: the first
 * `memoryLimit` distinct values are decided at once in a Set (`add` answers `new` or `duplicate`); after that every
 * value is `deferred` to one of `buckets` files by its hash, and `drain` dedupes one bucket at a time and merges the
 * survivors back into input order. `order` must increase with every `add` (the input's row number).
 */
export class SpillingDedupe {
  private readonly memoryLimit: number;
  private readonly bucketCount: number;
  private readonly tmpRoot: string;
  /** Each value decided in memory, with the order of its first occurrence. */
  private seen = new Map<string, number>();
  private dir: string | undefined;
  private writers: WriteStream[] = [];
  private readonly gathered: string[] = [];
  /** Duplicates found among the deferred values, known once `drain` has run. */
  deferredDuplicates = 0;

  constructor(options: SpillingDedupeOptions = {}) {
    this.memoryLimit = options.memoryLimit ?? SPILLING_DEDUPE_MEMORY_LIMIT;
    this.bucketCount = options.buckets ?? BUCKETS;
    this.tmpRoot = options.tmpDir ?? tmpdir();
  }

  /** `lineOf()` (no newline) is what `drain` yields back for a deferred first occurrence. */
  async add(value: string, order: number, lineOf: () => string): Promise<'new' | 'duplicate' | 'deferred'> {
    if (!this.dir) {
      if (this.seen.has(value)) return 'duplicate';
      if (this.seen.size < this.memoryLimit) {
        this.seen.set(value, order);
        return 'new';
      }
      await this.spill();
    }
    // Tab-separated: the order, the value (as JSON when it holds a tab or newline) and the line (one line of JSON).
    await this.write(value, `${order}\t${field(value)}\t${lineOf()}\n`);
    return 'deferred';
  }

  /** The order of the first occurrence of a value `add` answered `duplicate` for. */
  firstOrder(value: string): number | undefined {
    return this.seen.get(value);
  }

  /**
   * The deferred first occurrences' lines, in `order`; then `deferredDuplicates` holds the rest's count. Each deferred
   * duplicate is handed to `onDuplicate` (its first occurrence's order and its own line) before the first line comes.
   */
  async *drain(onDuplicate?: (first: number, line: string) => Promise<void>): AsyncGenerator<string> {
    if (!this.dir) return;
    const dir = this.dir;
    await Promise.all(this.writers.map((w, bucket) => finished(w.end(this.gathered[bucket] ?? ''))));
    this.writers = [];
    for (let b = 0; b < this.bucketCount; b++) this.deferredDuplicates += await dedupeBucket(dir, b, onDuplicate);
    yield* mergeByOrder(Array.from({ length: this.bucketCount }, (_, b) => join(dir, `first-${b}`)));
  }

  /** Removes the bucket files (call in `finally`). */
  async close(): Promise<void> {
    for (const w of this.writers) w.destroy();
    this.writers = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /** From here on values go to disk; the ones decided in memory go first, as already seen. */
  private async spill(): Promise<void> {
    this.dir = await mkdtemp(join(this.tmpRoot, 'signal-kit-dedup-'));
    for (let b = 0; b < this.bucketCount; b++) this.writers.push(createWriteStream(join(this.dir, `bucket-${b}`)));
    for (const [value, order] of this.seen) await this.write(value, `-${order}\t${field(value)}\t\n`);
    this.seen = new Map();
  }

  /** Lines are gathered per bucket and written 32 KiB at a time: a write per line makes a Buffer per line. */
  private async write(value: string, text: string): Promise<void> {
    const bucket = bucketOf(value, this.bucketCount);
    const gathered = (this.gathered[bucket] ?? '') + text;
    if (gathered.length < 32 * 1024) {
      this.gathered[bucket] = gathered;
      return;
    }
    this.gathered[bucket] = '';
    const writer = this.writers[bucket]!;
    if (!writer.write(gathered)) await once(writer, 'drain');
  }
}

/** The value as stored in a bucket line: as is, unless it holds a separator (then JSON, told apart by its quote). */
function field(value: string): string {
  return /[\t\n"]/.test(value) ? JSON.stringify(value) : value;
}

/** FNV-1a over the UTF-16 code units: cheap, and spreads similar addresses evenly. */
function bucketOf(value: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

/** The file's lines a chunk at a time (one await per chunk, not per line); the last line needs no newline. */
async function* lineChunks(path: string): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop() ?? '';
    if (lines.length > 0) yield lines;
  }
  if (rest !== '') yield [rest];
}

/** Writes the bucket's first occurrences (`order\tline`, still in order) and returns how many it dropped. */
async function dedupeBucket(
  dir: string,
  bucket: number,
  onDuplicate?: (first: number, line: string) => Promise<void>,
): Promise<number> {
  const seen = new Map<string, number>();
  const out = createWriteStream(join(dir, `first-${bucket}`));
  let duplicates = 0;
  for await (const lines of lineChunks(join(dir, `bucket-${bucket}`))) {
    let kept = '';
    for (const text of lines) {
      const first = text.indexOf('\t');
      const second = text.indexOf('\t', first + 1);
      const value = text.slice(first + 1, second);
      const marker = text.charCodeAt(0) === 45; // '-<order>': decided in memory before the spill
      const order = Number(text.slice(marker ? 1 : 0, first));
      const earlier = seen.get(value);
      if (earlier !== undefined) {
        if (!marker) {
          duplicates += 1;
          await onDuplicate?.(earlier, text.slice(second + 1));
        }
        continue;
      }
      seen.set(value, order);
      if (!marker) kept += `${text.slice(0, first)}\t${text.slice(second + 1)}\n`;
    }
    if (!out.write(kept)) await once(out, 'drain');
  }
  await finished(out.end());
  return duplicates;
}

/** Merges files of `order\tline` lines, each in order, into one sequence of lines in order. */
async function* mergeByOrder(paths: string[]): AsyncGenerator<string> {
  type Source = { lines: string[]; at: number; order: number; chunks: AsyncGenerator<string[]> };
  const sources: Source[] = [];
  /** Moves a source to its next line; false once it has none left. */
  const step = async (source: Source): Promise<boolean> => {
    source.at += 1;
    if (source.at >= source.lines.length) {
      const next = await source.chunks.next();
      if (next.done) return false;
      source.lines = next.value;
      source.at = 0;
    }
    const line = source.lines[source.at]!;
    source.order = Number(line.slice(0, line.indexOf('\t')));
    return true;
  };
  for (const path of paths) {
    const source: Source = { lines: [], at: -1, order: 0, chunks: lineChunks(path) };
    if (await step(source)) sources.push(source);
  }
  while (sources.length > 0) {
    let min = 0;
    for (let i = 1; i < sources.length; i++) if (sources[i]!.order < sources[min]!.order) min = i;
    const source = sources[min]!;
    const line = source.lines[source.at]!;
    yield line.slice(line.indexOf('\t') + 1);
    if (!(await step(source))) sources.splice(min, 1);
  }
}
