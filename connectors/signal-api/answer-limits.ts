/**
 * Checks of an answer against the limits the spec gives it, made after it is parsed and before anything uses it:
 * an answer past them is refused (an `UnexpectedResponseError` naming the field) rather than written, since the kit
 * could not tell which part of it to trust.
 */
import { MAX_SIGNALS_PER_CALL } from './limits.ts';
import type { BulkEnrichItem } from './types.ts';

/** What is wrong with an answer, naming its field (`results[3].signals`). */
export interface AnswerProblem {
  field: string;
  message: string;
}

/** A company's signals past the request's `limit` (or the spec's 500 per call when none was asked). */
export function signalsOverLimit(
  signals: readonly unknown[] | null | undefined,
  limit: number | undefined,
  field: string,
): AnswerProblem | undefined {
  const most = Math.min(limit ?? MAX_SIGNALS_PER_CALL, MAX_SIGNALS_PER_CALL);
  const count = signals?.length ?? 0;
  if (count <= most) return undefined;
  const asked = limit === undefined ? `the spec's maximum of ${MAX_SIGNALS_PER_CALL}` : `the limit of ${most} asked`;
  return { field, message: `${count} signals for one company, more than ${asked}` };
}

/** The first result of a bulk answer holding more signals than one domain may have. */
export function bulkSignalsOverLimit(
  results: readonly BulkEnrichItem[],
  limit: number | undefined,
): AnswerProblem | undefined {
  for (const [i, result] of results.entries()) {
    if (result.status !== 'ok') continue;
    const problem = signalsOverLimit(result.signals, limit, `results[${i}].signals`);
    if (problem) return { ...problem, message: `${problem.message} (${result.domain})` };
  }
  return undefined;
}
