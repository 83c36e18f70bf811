/** `schedule create --kind …`: the flags of a feed as the schedule's workflow input, every mistake named by its flag. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/args.ts';
import { parseScheduleCreate } from '../../../cli/commands/schedule.ts';
import { parseScheduleArgv } from '../../../cli/program.ts';
import { splitSlice } from '../../../workflows/feed-slices.ts';

const create = (args: string[]) => parseScheduleCreate(parseScheduleArgv(['create', ...args]).flags);
const base = ['--name', 'feed', '--output', 's3://bucket/feeds', '--every', '1d'];

describe('schedule create --kind', () => {
  it('reads a company-search feed with its search and content filters', () => {
    expect(
      create([
        ...base,
        '--kind',
        'company-search',
        '--signal-types',
        'hiring-trends,funding-round',
        '--industries',
        'Fintech,Banking',
        '--employee-count-min',
        '50',
        '--employee-count-max',
        '5000',
        '--technologies',
        'Snowflake',
        '--pain-points',
        'churn',
        '--since',
        '2026-03-01',
        '--max-credits',
        '500',
      ]),
    ).toMatchObject({
      name: 'feed',
      kind: 'company-search',
      output: 's3://bucket/feeds',
      everyMs: 86_400_000,
      since: '2026-03-01T00:00:00.000Z',
      maxCredits: 500,
      filters: {
        signal_types: ['hiring-trends', 'funding-round'],
        industries: ['Fintech', 'Banking'],
        employee_count_min: 50,
        employee_count_max: 5000,
        content_filters: { technologies: ['Snowflake'], pain_points: ['churn'] },
      },
    });
  });

  it('reads contact-search and intent-contacts feeds', () => {
    expect(
      create([
        ...base,
        '--kind',
        'contact-search',
        '--seniority',
        'Vp,Cxo',
        '--department',
        'Sales',
        '--job-title',
        'revenue',
      ]),
    ).toMatchObject({ filters: { seniority: ['Vp', 'Cxo'], department: ['Sales'], job_title: 'revenue' } });
    expect(
      create([...base, '--kind', 'intent-contacts', '--topics', 'b2b_1,b2b_2', '--email-validated', '--has-email']),
    ).toMatchObject({
      kind: 'intent-contacts',
      filters: { topic_ids: ['b2b_1', 'b2b_2'], email_validated: true, has_email: true },
    });
  });

  it.each([
    [['--kind', 'everything'], /--kind must be one of push, enrich, enrich-contacts, company-search/],
    [['--kind', 'intent-contacts'], /--topics is required/],
    [['--kind', 'intent-contacts', '--topics', 'crm'], /--topics must be b2b_<number> ids/],
    [
      ['--kind', 'intent-contacts', '--topics', 'b2b_1', '--since', '2026-01-01'],
      /--since does not apply to --kind intent-contacts/,
    ],
    [['--kind', 'company-search', '--watchlist', 'w.csv'], /--watchlist does not apply to --kind company-search/],
    [['--kind', 'company-search', '--job-title', 'cto'], /--job-title does not apply/],
    [['--kind', 'company-search', '--employee-count-min', '9', '--employee-count-max', '2'], /must not exceed/],
    [['--kind', 'company-search', '--employee-count-min', 'many'], /--employee-count-min must be a whole number/],
    [['--watchlist', 'w.csv', '--topics', 'b2b_1'], /--topics applies only to a feed/],
  ])('refuses %j', (args, message) => {
    expect(() => create([...base, ...args])).toThrow(UsageError);
    expect(() => create([...base, ...args])).toThrow(message);
  });
});

describe('splitting a capped search', () => {
  it('splits by type first (all types when none is given), then by listed values, then halves a head-count range', () => {
    expect(splitSlice('company-search', {}, ['news', 'sec-8k'])?.map((s) => s.via)).toEqual([
      'signal_types=news',
      'signal_types=sec-8k',
    ]);
    expect(
      splitSlice('company-search', { signal_types: ['news'], industries: ['A', 'B'] }, [])?.map((s) => s.via),
    ).toEqual(['industries=A', 'industries=B']);
    expect(
      splitSlice('company-search', { signal_types: ['news'], employee_count_min: 10, employee_count_max: 20 }, []),
    ).toEqual([
      {
        filters: { signal_types: ['news'], employee_count_min: 10, employee_count_max: 15 },
        via: 'employee_count=10-15',
      },
      {
        filters: { signal_types: ['news'], employee_count_min: 16, employee_count_max: 20 },
        via: 'employee_count=16-20',
      },
    ]);
    expect(splitSlice('contact-search', { signal_types: ['x'], seniority: ['Vp', 'Cxo'] }, [])?.length).toBe(2);
  });

  it('never splits by a filter the feed does not set (companies without it would be lost), nor a single value', () => {
    expect(splitSlice('company-search', { signal_types: ['news'] }, ['news', 'sec-8k'])).toBeUndefined();
    expect(
      splitSlice('company-search', { signal_types: ['news'], employee_count_min: 7, employee_count_max: 7 }, []),
    ).toBeUndefined();
    expect(splitSlice('contact-search', { signal_types: ['x'], seniority: ['Vp'] }, [])).toBeUndefined();
  });
});
