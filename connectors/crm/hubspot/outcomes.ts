/**
 * A batch update's answer as one outcome per record: 200 → every record written; 207 → the ids in `results`
 * written, each error's `context.ids` (or its `id`) rejected with HubSpot's category and message, transient or not.
 */
import type { CrmWriteOutcome } from '../writer.ts';

/** Categories that may pass on their own (the same update next night can succeed). */
const TRANSIENT_CATEGORIES = new Set([
  'RATE_LIMITS',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'TIMEOUT',
  'CONFLICT',
  'LOCKED',
]);

export const isTransientCategory = (category: string): boolean => TRANSIENT_CATEGORIES.has(category);

export interface BatchError {
  id?: string;
  category: string;
  message: string;
  context?: Record<string, string[]>;
}

export interface BatchAnswer {
  results: { id: string }[];
  errors?: BatchError[];
}

export function rejected(id: string, category: string, message: string): CrmWriteOutcome {
  return { id, outcome: 'rejected', code: category, message, transient: isTransientCategory(category) };
}

export function batchOutcomes(ids: readonly string[], status: number, answer: BatchAnswer): CrmWriteOutcome[] {
  if (status !== 207) return ids.map((id) => ({ id, outcome: 'written' }));
  const outcomes = new Map<string, CrmWriteOutcome>();
  for (const result of answer.results) outcomes.set(result.id, { id: result.id, outcome: 'written' });
  for (const error of answer.errors ?? []) {
    const named = [...(error.context?.['ids'] ?? []), ...(error.id ? [error.id] : [])];
    for (const id of named) outcomes.set(id, rejected(id, error.category, error.message));
  }
  return ids.map(
    (id) =>
      outcomes.get(id) ?? { id, outcome: 'not_attempted', reason: 'HubSpot answered 207 without naming this record' },
  );
}
