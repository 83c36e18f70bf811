import { describe, expect, it } from 'vitest';
import {
  absoluteLinkedinUrl,
  isoDateTime,
  parseDateTime,
  signalId,
  toIsoUtc,
} from '../../../connectors/signal-api/scalars.ts';

describe('scalars', () => {
  it('reads date-times in every admitted form', () => {
    expect(toIsoUtc('2026-03-01T12:00:00Z')).toBe('2026-03-01T12:00:00.000Z');
    expect(toIsoUtc('2026-03-01T12:00:00.000+00:00')).toBe('2026-03-01T12:00:00.000Z');
    expect(toIsoUtc('2026-03-01T12:00:00.123456+00:00')).toBe('2026-03-01T12:00:00.123Z');
    expect(toIsoUtc('2026-03-01T12:00:00')).toBe('2026-03-01T12:00:00.000Z'); // no offset: UTC, not local
    expect(toIsoUtc('2026-03-01 12:00:00')).toBe('2026-03-01T12:00:00.000Z');
    expect(toIsoUtc(1772366400000)).toBe('2026-03-01T12:00:00.000Z');
    expect(parseDateTime('yesterday')).toBeUndefined();
  });

  it('makes LinkedIn URLs absolute', () => {
    expect(absoluteLinkedinUrl('/company/acme')).toBe('https://www.linkedin.com/company/acme');
    expect(absoluteLinkedinUrl('company/acme')).toBe('https://www.linkedin.com/company/acme');
    expect(absoluteLinkedinUrl('linkedin.com/company/acme')).toBe('https://www.linkedin.com/company/acme');
    expect(absoluteLinkedinUrl('https://www.linkedin.com/in/ada')).toBe('https://www.linkedin.com/in/ada');
  });
});

describe('scalar schemas', () => {
  it('reads signal ids as sent (sig_, UUID, a number as its string) and refuses characters unsafe in keys', () => {
    expect(signalId.parse('sig_0a1b')).toBe('sig_0a1b');
    expect(signalId.parse('2f1c7a9e-5b3d-4c8e-9a1f-0e2d3c4b5a69')).toBe('2f1c7a9e-5b3d-4c8e-9a1f-0e2d3c4b5a69');
    expect(signalId.parse(42)).toBe('42');
    expect(signalId.safeParse('has spaces/and slashes').success).toBe(false);
    expect(signalId.safeParse('').success).toBe(false);
  });

  it('outputs date-times as UTC Z with milliseconds and refuses what is not one', () => {
    expect(isoDateTime.parse('2026-03-01T14:30:00+02:00')).toBe('2026-03-01T12:30:00.000Z');
    expect(isoDateTime.parse('2026-03-01T12:00:00Z')).toBe('2026-03-01T12:00:00.000Z');
    expect(isoDateTime.parse(1772366400)).toBe('2026-03-01T12:00:00.000Z');
    expect(isoDateTime.safeParse('yesterday').error?.issues[0]?.message).toBe('not a date-time');
  });
});
