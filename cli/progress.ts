import type { JobRetrying } from '../library/jobs.ts';
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

  /** A step being retried is said at once, on a line of its own: a job that waits never waits silently. */
  retrying(note: JobRetrying): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${note.activity} retrying (attempt ${note.attempt}): ${note.error}\n`);
      return;
    }
    this.out.write(`${JSON.stringify({ event: 'retrying', ...note })}\n`);
  }

  /** Temporal stopped answering: said once, on a line of its own, while the follower retries. */
  unreachable(message: string): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${message}\n`);
      return;
    }
    this.out.write(`${JSON.stringify({ event: 'temporal_unreachable', message })}\n`);
  }

  finish(): void {
    if (this.tty) this.out.write('\n');
  }

  private bar(p: JobProgress): string {
    const width = 24;
    // Until the input is prepared the number of batches is unknown (the first ones may already run): no share yet.
    const known = p.batchesTotal > 0;
    const share = known ? Math.min(1, p.batchesDone / p.batchesTotal) : 0;
    const filled = Math.floor(share * width);
    const elapsed = (Date.now() - this.startedAt) / 1000;
    const rate = elapsed > 0 ? p.batchesDone / elapsed : 0;
    const eta =
      known && rate > 0 && p.batchesDone < p.batchesTotal
        ? Math.round((p.batchesTotal - p.batchesDone) / rate)
        : undefined;
    const failed = p.batchesFailed ? ` (${p.batchesFailed} failed)` : '';
    const where =
      p.status === 'preparing'
        ? [p.batchesDone > 0 ? `batches ${p.batchesDone} done while the input is read` : 'reading the input']
        : [p.rows > 0 ? `rows ${p.rows}` : '', `batches ${p.batchesDone}/${p.batchesTotal}${failed}`];
    return [
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]${known ? ` ${Math.floor(share * 100)}%` : ''}`,
      `${p.status}`,
      ...where,
      `credits ${p.credits}`,
      p.batchesDone > 0 ? `${rate.toFixed(1)} batches/s` : '',
      eta === undefined ? '' : `eta ${eta}s`,
    ]
      .filter(Boolean)
      .join('  ');
  }
}
