import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import type { Store } from '../../connectors/storage/store.ts';
import { type BatchSeries, duplicatesKey } from './layout.ts';
import type { JobRef } from './types.ts';

/**
 * The rows of an input that repeat an earlier row's value, kept on local disk while the input is read (memory stays
 * flat however many there are), then published grouped by the batch that holds their first row
 * (`work/dups-<series>-N.jsonl`), where the job's last step answers them from that batch's part.
 *
 * Which batch holds a row is known once every batch is written: batches take first occurrences in input order, so
 * the batch of row r is the last one whose first row is at most r (a binary search over each series' first rows).
 */
export class DuplicateSpill {
  private readonly tmpRoot: string;
  private dir: string | undefined;
  private writer: WriteStream | undefined;
  private gathered = '';
  count = 0;

  constructor(tmpRoot = tmpdir()) {
    this.tmpRoot = tmpRoot;
  }

  /** Records a duplicate row: its first occurrence's series and row, and its own batch line (JSON, one line). */
  async add(series: BatchSeries, first: number, line: string): Promise<void> {
    if (!this.writer) {
      this.dir = await mkdtemp(join(this.tmpRoot, 'signal-kit-dups-'));
      this.writer = createWriteStream(join(this.dir, 'all'));
    }
    this.count += 1;
    this.gathered += `${series === 'single' ? 's' : 'b'}\t${first}\t${line}\n`;
    if (this.gathered.length >= 64 * 1024) {
      const text = this.gathered;
      this.gathered = '';
      if (!this.writer.write(text)) await once(this.writer, 'drain');
    }
  }

  /**
   * Publishes the duplicates, one object per batch holding their first rows; `starts` gives each series' first row
   * per batch (ascending). Returns how many objects were written.
   */
  async publish(
    store: Store,
    job: JobRef,
    starts: Record<BatchSeries, readonly number[]>,
    heartbeat: () => void,
  ): Promise<number> {
    if (!this.writer || !this.dir) return 0;
    const dir = this.dir;
    await finished(this.writer.end(this.gathered));
    this.gathered = '';
    // Grouped per target batch through small appends, so that only a few MiB are ever held.
    const pending = new Map<string, string>();
    let held = 0;
    const flush = async () => {
      for (const [name, text] of pending) await appendFile(join(dir, name), text);
      pending.clear();
      held = 0;
    };
    const targets = new Set<string>();
    const lines = createInterface({ input: createReadStream(join(dir, 'all'), 'utf8'), crlfDelay: Infinity });
    for await (const text of lines) {
      if (text === '') continue;
      const tab1 = text.indexOf('\t');
      const tab2 = text.indexOf('\t', tab1 + 1);
      const series: BatchSeries = text.slice(0, tab1) === 's' ? 'single' : 'bulk';
      const first = Number(text.slice(tab1 + 1, tab2));
      const line = text.slice(tab2 + 1);
      const index = batchOfRow(starts[series], first);
      const name = `${series}-${index}`;
      targets.add(name);
      // The first row goes along, so the answer can be found by row in its part.
      const entry = `${line.slice(0, -1)},"first":${first}}\n`;
      pending.set(name, (pending.get(name) ?? '') + entry);
      held += entry.length;
      if (held >= 4 * 2 ** 20) await flush();
    }
    await flush();
    for (const name of targets) {
      heartbeat();
      const [series, index] = name.split('-') as [BatchSeries, string];
      await store.writeText(duplicatesKey(job, series, Number(index)), await readFile(join(dir, name), 'utf8'));
    }
    return targets.size;
  }

  async close(): Promise<void> {
    this.writer?.destroy();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/** The batch whose first row is the greatest at most `row` (batches' first rows ascend). */
export function batchOfRow(starts: readonly number[], row: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
