/** `--format` as a user types it: several formats, any order and case; a wrong one is a usage error naming the flag. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/args.ts';
import { enrichJob, verifyEmailsJob } from '../../../cli/commands/job-commands.ts';
import { parseCreate, parseScheduleCreate } from '../../../cli/commands/schedule.ts';

const where = { input: 'file:///tmp/in.csv', output: 'file:///tmp/out' };

describe('--format', () => {
  it('takes jsonl, csv and parquet, comma-separated, and does not change the job id', () => {
    const plain = enrichJob(where);
    const both = enrichJob({ ...where, format: 'Parquet, csv' });
    expect(both.input).toMatchObject({ formats: ['csv', 'parquet'] });
    expect(plain.input).not.toHaveProperty('formats');
    expect((both.input as { jobId: string }).jobId).toBe((plain.input as { jobId: string }).jobId);
    expect(verifyEmailsJob({ ...where, format: 'jsonl' }).input).toMatchObject({ formats: ['jsonl'] });
    const schedule = parseCreate({
      name: 'n',
      watchlist: where.input,
      output: where.output,
      every: '6h',
      format: 'parquet',
    });
    expect(schedule.formats).toEqual(['parquet']);
  });

  it('is taken by every feed kind, and a wrong one is refused naming the flag', () => {
    const feed = { name: 'n', output: where.output, every: '1d' };
    for (const [kind, filters] of [
      ['company-search', {}],
      ['contact-search', {}],
      ['intent-contacts', { topics: 'b2b_17' }],
    ] as const) {
      expect(parseScheduleCreate({ ...feed, ...filters, kind, format: 'csv,PARQUET' })).toMatchObject({
        kind,
        formats: ['csv', 'parquet'],
      });
      expect(parseScheduleCreate({ ...feed, ...filters, kind })).not.toHaveProperty('formats');
      expect(() => parseScheduleCreate({ ...feed, ...filters, kind, format: 'xlsx' })).toThrow(/--format .*"xlsx"/);
    }
  });

  it('refuses an unknown format, naming the flag and the value', () => {
    expect(() => enrichJob({ ...where, format: 'parquet,xlsx' })).toThrow(UsageError);
    expect(() => enrichJob({ ...where, format: 'parquet,xlsx' })).toThrow(/--format .*"xlsx"/);
    expect(() => verifyEmailsJob({ ...where, format: '' })).toThrow(/--format/);
  });
});
