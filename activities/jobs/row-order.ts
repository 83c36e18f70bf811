import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Rows per bucket: one bucket is sorted in memory at a time. */
const BUCKET_ROWS = 10_000;
/** Past this much text held, every bucket's text goes to its file on local disk. */
const HELD_BYTES = 16 * 1024 * 1024;

/**
 * Puts lines of text back in input order, by their row number, with bounded memory: a job's parts hold its rows in
 * the order they were answered (bulk, single, duplicate and invalid parts each by themselves), and the CRM file lists
 * them in the order of the input. Rows are gathered in buckets of consecutive row numbers (in memory, spilled to
 * local disk past 16 MiB), and each bucket is sorted when it is read, so at most one bucket is sorted at once.
 */
export class RowOrder {
  private readonly held = new Map<number, { row: number; text: string }[]>();
  private heldBytes = 0;
  private dir: string | undefined;
  private readonly spilled = new Set<number>();
  private readonly limit: number;
  private readonly tmpRoot: string;

  /** `heldBytes`: how much text is held in memory before it is spilled (tests make it small); `tmpRoot`: where. */
  constructor(heldBytes = HELD_BYTES, tmpRoot = tmpdir()) {
    this.limit = heldBytes;
    this.tmpRoot = tmpRoot;
  }

  async add(row: number, text: string): Promise<void> {
    const bucket = Math.floor(row / BUCKET_ROWS);
    let entries = this.held.get(bucket);
    if (entries === undefined) {
      entries = [];
      this.held.set(bucket, entries);
    }
    entries.push({ row, text });
    this.heldBytes += text.length + 16;
    if (this.heldBytes >= this.limit) await this.spill();
  }

  /** The texts in ascending row order (rows of one number in the order they were added). */
  async *inOrder(): AsyncGenerator<string> {
    const buckets = [...new Set([...this.held.keys(), ...this.spilled])].sort((a, b) => a - b);
    for (const bucket of buckets) {
      const entries = this.spilled.has(bucket) ? await this.readSpilled(bucket) : [];
      entries.push(...(this.held.get(bucket) ?? []));
      this.held.delete(bucket);
      entries.sort((a, b) => a.row - b.row);
      for (const entry of entries) yield entry.text;
    }
  }

  async close(): Promise<void> {
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private async spill(): Promise<void> {
    this.dir ??= await mkdtemp(join(this.tmpRoot, 'signal-kit-rows-'));
    for (const [bucket, entries] of this.held) {
      const lines = entries.map((entry) => `${JSON.stringify([entry.row, entry.text])}\n`).join('');
      await appendFile(join(this.dir, String(bucket)), lines);
      this.spilled.add(bucket);
    }
    this.held.clear();
    this.heldBytes = 0;
  }

  private async readSpilled(bucket: number): Promise<{ row: number; text: string }[]> {
    const text = await readFile(join(this.dir as string, String(bucket)), 'utf8');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [row, entry] = JSON.parse(line) as [number, string];
        return { row, text: entry };
      });
  }
}
