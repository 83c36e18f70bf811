/** What a user sees of a job's progress on a terminal while `--wait` follows it. */
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../../activities/jobs/types.ts';
import { ProgressReporter } from '../../../cli/progress.ts';
import { followJob } from '../../../library/jobs.ts';
import type { JobProgress } from '../../../workflows/job-progress.ts';

/** A terminal: what was drawn last on the bar's line. */
function terminal() {
  const writes: string[] = [];
  const out = { isTTY: true, write: (text: string) => writes.push(text) } as unknown as NodeJS.WriteStream;
  const lastBar = () =>
    writes
      .filter((w) => w.startsWith('\r'))
      .at(-1)
      ?.slice('\r\x1b[2K'.length);
  return { out, lastBar };
}

const progress = (over: Partial<JobProgress>): JobProgress => ({
  jobId: 'j',
  kind: 'enrich',
  status: 'running',
  batchesTotal: 50,
  batchesDone: 0,
  batchesFailed: 0,
  rows: 5000,
  distinct: 5000,
  invalid: 0,
  ok: 0,
  not_found: 0,
  error: 0,
  credits: 0,
  ...over,
});

describe('the progress bar', () => {
  it('says the input is being read while preparing, with no share and no "rows 0"', () => {
    const { out, lastBar } = terminal();
    const reporter = new ProgressReporter(out);
    reporter.update(progress({ status: 'preparing', batchesTotal: 0, rows: 0, distinct: 0 }));
    expect(lastBar()).toContain('reading the input');
    expect(lastBar()).not.toContain('rows 0');
    expect(lastBar()).not.toMatch(/%/);
    // The first batches run while the input is still read: done, but not yet a share of an unknown total.
    reporter.update(progress({ status: 'preparing', batchesTotal: 0, batchesDone: 4, rows: 0, distinct: 0 }));
    expect(lastBar()).toContain('batches 4 done while the input is read');
    expect(lastBar()).not.toMatch(/%/);
  });

  it('ends at 100 % on a finished job although the last poll saw 49 of 50 batches', async () => {
    const { out, lastBar } = terminal();
    let finished = false;
    const result = new Promise<JobResult>((resolve) =>
      setTimeout(() => {
        finished = true;
        resolve({ status: 'completed' } as JobResult);
      }, 50),
    );
    const handle = {
      result: () => result,
      query: async () =>
        finished ? progress({ status: 'completed', batchesDone: 50 }) : progress({ batchesDone: 49 }),
    } as unknown as WorkflowHandle;
    await followJob(handle, new ProgressReporter(out));
    expect(lastBar()).toMatch(/^\[#{24}\] 100% {2}completed/);
  });
});
