import type { JobProgress } from '../workflows/job-progress.ts';

/** Renders job progress: a redrawn bar on a terminal, one JSON line per change otherwise. */
export class ProgressReporter {
  private readonly startedAt = Date.now();
  private lastLine = '';
  private readonly tty: boolean;
  private readonly out: NodeJS.WriteStream;

  constructor(out: NodeJS.WriteStream = process.stderr) {
    this.out = out;
    this.tty = out.isTTY === true;
  }

  update(progress: JobProgress): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${this.bar(progress)}`);
      return;
    }
    const line = JSON.stringify({ event: 'progress', ...progress });
    if (line !== this.lastLine) this.out.write(`${line}\n`);
    this.lastLine = line;
  }

  finish(): void {
    if (this.tty) this.out.write('\n');
  }

  private bar(p: JobProgress): string {
    const total = Math.max(p.batchesTotal, 1);
    const share = Math.min(1, p.batchesDone / total);
    const width = 24;
    const filled = Math.round(share * width);
    const elapsed = (Date.now() - this.startedAt) / 1000;
    const rate = elapsed > 0 ? p.batchesDone / elapsed : 0;
    const eta = rate > 0 ? Math.round((p.batchesTotal - p.batchesDone) / rate) : undefined;
    return [
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0)}%`,
      `${p.status}`,
      `rows ${p.rows}`,
      `batches ${p.batchesDone}/${p.batchesTotal}${p.batchesFailed ? ` (${p.batchesFailed} failed)` : ''}`,
      `credits ${p.credits}`,
      `${rate.toFixed(1)} batches/s`,
      eta === undefined ? '' : `eta ${eta}s`,
    ]
      .filter(Boolean)
      .join('  ');
  }
}
