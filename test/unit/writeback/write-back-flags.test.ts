/** `schedule create --write-back`: what the schedule keeps (no secret), and each mistake named by its flag. */
import { describe, expect, it } from 'vitest';
import { parseScheduleCreate } from '../../../cli/commands/schedule.ts';

const base = { kind: 'enrich', name: 'nightly', input: '/tmp/accounts.csv', output: '/tmp/out', every: '1d' };

describe('schedule create --write-back', () => {
  it('keeps the CRM, the fields and the policies in the schedule', () => {
    const definition = parseScheduleCreate({
      ...base,
      writeBack: 'salesforce',
      writeFields: 'signal_count,latest_signal_type',
      writePolicy: ['latest_signal_type=fill-empty'],
    });
    expect(definition).toMatchObject({
      writeBack: {
        crm: 'salesforce',
        fields: ['signal_count', 'latest_signal_type'],
        policies: { latest_signal_type: 'fill-empty' },
      },
    });
  });

  it('refuses an unknown CRM, a bad policy, and fields without a CRM, naming the flag', () => {
    expect(() => parseScheduleCreate({ ...base, writeBack: 'pipedrive' })).toThrow(
      /--write-back must be hubspot or salesforce/,
    );
    expect(() => parseScheduleCreate({ ...base, writeBack: 'hubspot', writePolicy: ['x=keep'] })).toThrow(
      /--write-policy/,
    );
    expect(() => parseScheduleCreate({ ...base, writeFields: 'signal_count' })).toThrow(/need --write-back/);
    expect(() =>
      parseScheduleCreate({
        kind: 'push',
        name: 'p',
        watchlist: '/tmp/w.csv',
        output: '/tmp/out',
        every: '1d',
        writeBack: 'hubspot',
      }),
    ).toThrow(/--write-back/);
  });
});
