/**
 * What `signal-kit enrich-contacts` says when its credit budget stops it: the contacts not done yet and what one of
 * them can cost at its worst, from the spec's price (2 credits per person-level signal returned, at most `--limit`
 * of them, 500 without it), never a verification's 1 credit per address.
 */
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../../activities/jobs/types.ts';
import { budgetMessage } from '../../../cli/job-outcome.ts';
import type { JobStart } from '../../../library/jobs.ts';

/** A contacts job stopped by its budget: 10 distinct contacts, 4 answered (3 found, 1 unknown to the service). */
const result = {
  jobId: 'contacts-budget',
  kind: 'enrich-contacts',
  status: 'budget_exhausted',
  manifestUrl: 'file:///out/contacts-budget/_manifest.json',
  counts: { input_rows: 10, distinct: 10, duplicates: 0, ok: 3, not_found: 1, error: 0, invalid: 0, lines: 4 },
  credits: 40,
  parts: 1,
} as JobResult;

const contactsJob = (limit?: number) =>
  ({
    workflow: 'enrichContacts',
    input: {
      jobId: 'contacts-budget',
      input: 'contacts.csv',
      output: 'out',
      maxCredits: 50,
      ...(limit ? { options: { limit } } : {}),
    },
  }) as JobStart;

describe('the budget message of an enrich-contacts job', () => {
  it('counts contacts, found or not, and prices one at 2 credits per signal up to --limit', () => {
    const message = budgetMessage(contactsJob(5), result);
    expect(message).toContain(
      'credit budget reached: 40 of 50 credits charged, 6 of 10 distinct contacts not yet done',
    );
    expect(message).toContain('each of them can cost up to 10 credits');
  });

  it('without --limit: up to 500 signals a contact, and how --limit caps it', () => {
    const message = budgetMessage(contactsJob(), result);
    expect(message).toContain('each contact can cost up to 1000 credits');
    expect(message).toContain('--limit N caps each contact at 2×N credits');
  });
});
