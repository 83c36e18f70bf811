/**
 * A company's state takes an answer in once: taken in twice (a night carrying on a stopped one, a repeated finalize),
 * a signal older than the retention window of remembered ids is still not counted again, because the company is
 * complete through a time after it. Without the complete-through check the second take counts it twice.
 */
import { describe, expect, it } from 'vitest';
import { mergeAnswer, RETENTION_DAYS } from '../../../activities/state/sync-rules.ts';
import type { CompanyAnswer } from '../../../activities/sync/types.ts';

const DAY = 86_400_000;
const asOf = '2026-06-01T00:00:00.000Z';
const at = (daysBefore: number) => new Date(Date.parse(asOf) - daysBefore * DAY).toISOString();

describe('mergeAnswer', () => {
  it('counts nothing twice when an answer holding signals older than the id window is taken in twice', () => {
    const answer: CompanyAnswer = {
      status: 'ok',
      company: { name: 'Acme' },
      signals: [
        { signal_id: 's-new', signal_type: 'news', detected_at: at(3) },
        { signal_id: 's-old', signal_type: 'funding', detected_at: at(RETENTION_DAYS + 30) },
      ],
    };
    const once = mergeAnswer(undefined, answer, asOf);
    expect(once.added).toBe(2);
    // The old signal's id is forgotten (older than the window): only the complete-through time says it is held.
    expect(once.state!.ids.map(([id]) => id)).toEqual(['s-new']);
    const twice = mergeAnswer(once.state, answer, asOf);
    expect(twice.added).toBe(0);
    expect(twice.state!.counts).toEqual({ news: 1, funding: 1 });
  });

  it("keeps a company's picture when tonight's answer is an error (the night's files show the error)", () => {
    const held = mergeAnswer(undefined, { status: 'ok', signals: [] }, asOf).state;
    const error: CompanyAnswer = { status: 'error', signals: [], error: { code: 'validation_error', message: 'x' } };
    expect(mergeAnswer(held, error, asOf).state).toBe(held);
  });
});
